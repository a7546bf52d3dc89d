//! tollgate, governor and the keyed floor in turns for a while, one line
//! per half second: whether the machine runs in stretches of different
//! speed, and whether a slow stretch costs tollgate a larger share of its
//! time than it costs the others.
//!
//! ```text
//! cargo run --release --example stretches                 # 30 s, 10,000 String keys
//! cargo run --release --example stretches -- 120 20000    # seconds, keys
//! ```
//!
//! Each line gives every contender's median nanoseconds per decision over
//! that half second's rounds (one batch each per round). The summary splits
//! the half seconds into fast and slow ones by the floor's time against its
//! fastest half second's, and gives the medians of the ratios in each.
//! `docs/benchmarks.md` holds runs.

use std::process::ExitCode;
use std::time::{Duration, Instant};

#[path = "../benches/support/mod.rs"]
mod support;

use support::args::count_arg;
use support::keys::Pick;
use support::median::median;
use support::string_contenders::StringContenders;

/// Decisions per timed batch: a few milliseconds for the fastest contender.
const BATCH: u64 = 100_000;

/// How long one reported line covers.
const WINDOW: Duration = Duration::from_millis(500);

/// A half second counts as slow where the floor took at least this many
/// times its fastest half second's time. On the model 207 Xeon the floor's
/// half seconds gathered near its fastest and near twice it; 1.5x lies
/// between.
const SLOW: f64 = 1.5;

/// One half second's medians, nanoseconds per decision.
#[derive(Clone, Copy)]
struct Window {
    tollgate: f64,
    governor: f64,
    floor: f64,
}

impl Window {
    /// tollgate's speed over the floor's.
    fn share_of_floor(&self) -> f64 {
        self.floor / self.tollgate
    }

    /// governor's time over tollgate's.
    fn governor_over_tollgate(&self) -> f64 {
        self.governor / self.tollgate
    }
}

/// Over a set of windows, the medians of the floor's time, of tollgate's
/// speed over the floor's and of governor's time over tollgate's.
fn ratios(windows: &[Window]) -> (f64, f64, f64) {
    let mut floor: Vec<f64> = windows.iter().map(|w| w.floor).collect();
    let mut share_of_floor: Vec<f64> = windows.iter().map(Window::share_of_floor).collect();
    let mut governor: Vec<f64> = windows.iter().map(Window::governor_over_tollgate).collect();
    (
        median(&mut floor),
        median(&mut share_of_floor),
        median(&mut governor),
    )
}

fn main() -> ExitCode {
    let (seconds, keys) = match (count_arg(1, 30, 3600), count_arg(2, 10_000, 1_000_000)) {
        (Ok(seconds), Ok(keys)) => (seconds, keys as usize),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("stretches: {e} (arguments: seconds, keys)");
            return ExitCode::from(2);
        }
    };
    let contenders = StringContenders::new(keys);
    let mut pick = Pick::new(0x5eed);

    println!("{keys} String keys, median ns per decision in each half second");
    println!(
        "| at (s) | tollgate | governor keyed | keyed floor | tollgate / floor speed | governor / tollgate time |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    let began = Instant::now();
    let mut windows = Vec::new();
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    let mut window_end = WINDOW;
    while began.elapsed() < Duration::from_secs(seconds) {
        match contenders.turn(BATCH, &mut pick) {
            Ok(batch) => {
                for (c, ns) in batch.into_iter().enumerate() {
                    times[c].push(ns);
                }
            }
            Err(e) => {
                eprintln!("stretches: {e}");
                return ExitCode::FAILURE;
            }
        }
        if began.elapsed() >= window_end {
            let [t, g, f] = &mut times;
            let window = Window {
                tollgate: median(t),
                governor: median(g),
                floor: median(f),
            };
            println!(
                "| {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {:.2} |",
                window_end.as_secs_f64(),
                window.tollgate,
                window.governor,
                window.floor,
                window.share_of_floor(),
                window.governor_over_tollgate()
            );
            windows.push(window);
            times.iter_mut().for_each(Vec::clear);
            window_end += WINDOW;
        }
    }
    let Some(fastest) = windows.iter().map(|w| w.floor).min_by(f64::total_cmp) else {
        println!("no whole half second: nothing to summarise");
        return ExitCode::SUCCESS;
    };
    let (slow, fast): (Vec<Window>, Vec<Window>) =
        windows.iter().partition(|w| w.floor >= SLOW * fastest);
    println!();
    println!(
        "| half seconds | how many | floor (ns) | tollgate / floor speed | governor / tollgate time |"
    );
    println!("|---|---:|---:|---:|---:|");
    for (name, set) in [
        (format!("fast (floor under {SLOW}x its fastest)"), fast),
        (format!("slow (floor at {SLOW}x its fastest or more)"), slow),
    ] {
        if set.is_empty() {
            println!("| {name} | 0 | | | |");
            continue;
        }
        let (floor, share_of_floor, governor) = ratios(&set);
        println!(
            "| {name} | {} | {floor:.1} | {share_of_floor:.2} | {governor:.2} |",
            set.len()
        );
    }
    ExitCode::SUCCESS
}
