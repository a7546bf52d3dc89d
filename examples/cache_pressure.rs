//! One thread of hits on tracked keys while a second thread is idle or
//! sweeps a large buffer, in turns: whether a neighbour emptying the shared
//! L3 slows tollgate more than governor and the keyed floor, as the
//! machine's slow stretches do.
//!
//! ```text
//! cargo run --release --example cache_pressure                   # 64 MiB, 31 rounds, 10,000 keys
//! cargo run --release --example cache_pressure -- 256 41 20000   # MiB swept, rounds, keys
//! ```
//!
//! Each round times every contender once with the sweep off and once with
//! it on (the order alternating by round); the report gives each one's
//! median nanoseconds per decision both ways and the ratios between them.
//! `docs/benchmarks/targets-in-detail.md` (slow stretches) holds runs.

use std::hint::black_box;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[path = "../benches/support/mod.rs"]
mod support;

use support::args::count_arg;
use support::keys::Pick;
use support::median::median;
use support::string_contenders::{NAMES, StringContenders};

/// Decisions per timed batch.
const BATCH: u64 = 200_000;

/// A thread that, while `on` is set, adds one to a word of every cache
/// line of a `mib`-MiB buffer in turn, and otherwise sleeps.
fn start_sweeper(mib: usize, on: Arc<AtomicBool>) {
    let words = mib << 17;
    std::thread::spawn(move || {
        let mut buffer = vec![0u64; words];
        let mut at = 0;
        loop {
            // Relaxed: a switch read in a loop; no data travels with it.
            if !on.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_micros(200));
                continue;
            }
            for _ in 0..4096 {
                buffer[at] = buffer[at].wrapping_add(1);
                at = (at + 8) % words;
            }
            black_box(&mut buffer);
        }
    });
}

fn main() -> ExitCode {
    let (mib, rounds, keys) = match (
        count_arg(1, 64, 4096),
        count_arg(2, 31, 10_000),
        count_arg(3, 10_000, 1_000_000),
    ) {
        (Ok(mib), Ok(rounds), Ok(keys)) => (mib as usize, rounds as usize, keys as usize),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
            eprintln!("cache_pressure: {e} (arguments: MiB swept, rounds, keys)");
            return ExitCode::from(2);
        }
    };
    let on = Arc::new(AtomicBool::new(false));
    start_sweeper(mib, Arc::clone(&on));
    let contenders = StringContenders::new(keys);
    // times[contender][sweep off, on]
    let mut times = vec![[Vec::new(), Vec::new()]; NAMES.len()];
    let mut pick = Pick::new(0x5eed);
    for round in 0..rounds {
        for sweeping in [round % 2 == 1, round % 2 == 0] {
            // Relaxed: the sweeper only needs to see the switch soon.
            on.store(sweeping, Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(20));
            match contenders.turn(BATCH, &mut pick) {
                Ok(batch) => {
                    for (c, ns) in batch.into_iter().enumerate() {
                        times[c][usize::from(sweeping)].push(ns);
                    }
                }
                Err(e) => {
                    eprintln!("cache_pressure: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    on.store(false, Ordering::Relaxed);
    println!("{keys} String keys, {mib} MiB swept, {rounds} rounds: median ns per decision");
    println!("| contender | sweep off | sweep on | on / off |");
    println!("|---|---:|---:|---:|");
    let mut medians = Vec::new();
    for (c, [off, on]) in times.iter_mut().enumerate() {
        let (off, on) = (median(off), median(on));
        println!("| {} | {off:.1} | {on:.1} | {:.2} |", NAMES[c], on / off);
        medians.push((off, on));
    }
    let (tollgate, governor, floor) = (medians[0], medians[1], medians[2]);
    println!(
        "tollgate / floor speed: {:.2} off, {:.2} on; governor / tollgate time: {:.2} off, {:.2} on",
        floor.0 / tollgate.0,
        floor.1 / tollgate.1,
        governor.0 / tollgate.0,
        governor.1 / tollgate.1
    );
    ExitCode::SUCCESS
}
