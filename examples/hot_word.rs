//! One hot word, no lookup: how a CAS loop's retry policy shares a single
//! contended state between threads. Each decision compares a 24-byte key
//! stored beside the word (as a table entry holds it), reads a shared
//! clock value and applies a GCRA-like step with a CAS; the policies differ
//! only in what a thread does after its CAS fails.
//!
//! ```text
//! cargo run --release --example hot_word                # 1, 2, 4, 8, 16 threads
//! cargo run --release --example hot_word -- 2,4         # chosen thread counts
//! ```
//!
//! For each policy and thread count it prints the decisions per second of
//! all threads together, the fairness (the slowest thread's decisions over
//! the fastest's) and the longest any one decision took after losing a race.
//! `docs/benchmarks-earlier.md` (the 16-core section) holds a run.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_utils::{Backoff, CachePadded};

#[path = "../benches/support/mod.rs"]
mod support;

use support::threads::{Run, until_stopped};

/// A key and its state on one cache line, as in a table entry.
#[repr(C, align(64))]
struct Entry {
    key: [u8; 24],
    state: AtomicU64,
}

/// What a thread does after a failed CAS.
#[derive(Clone, Copy, Debug)]
enum Retry {
    /// `Backoff::spin`, then retry with the value the failed CAS returned.
    StaleAfterSpin,
    /// Retry at once with the value the failed CAS returned.
    AtOnce,
    /// `Backoff::spin`, then load the word again (the crate's loop).
    SpinThenLoad,
    /// Up to 256 spin hints, doubling per failure, then load the word again.
    LongSpinThenLoad,
    /// No CAS: one `fetch_add` per decision, the line's own limit.
    FetchAdd,
}

const POLICIES: [Retry; 5] = [
    Retry::StaleAfterSpin,
    Retry::AtOnce,
    Retry::SpinThenLoad,
    Retry::LongSpinThenLoad,
    Retry::FetchAdd,
];

/// The clock value a shared upkeep thread publishes, as the default clock does.
static NOW: CachePadded<AtomicU64> = CachePadded::new(AtomicU64::new(1));

/// Nanoseconds added per decision: small, so every decision passes.
const STEP: u64 = 1_000;

/// One decision; if its first CAS failed (a race lost), how long it took
/// from then on. Only that part is timed, so the clock reads do not change
/// how the threads contend.
#[inline]
fn decide(entry: &Entry, key: &[u8; 24], retry: Retry) -> Option<Duration> {
    // Relaxed throughout: one word holds the whole state.
    if &entry.key != key {
        return None;
    }
    if let Retry::FetchAdd = retry {
        entry.state.fetch_add(STEP, Ordering::Relaxed);
        return None;
    }
    let now = NOW.load(Ordering::Relaxed);
    let mut current = entry.state.load(Ordering::Relaxed);
    let backoff = Backoff::new();
    let mut failures = 0u32;
    let mut lost_at = None;
    loop {
        let next = current.max(now) + STEP;
        match entry
            .state
            .compare_exchange_weak(current, next, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => return lost_at.map(|at: Instant| at.elapsed()),
            Err(actual) => {
                lost_at.get_or_insert_with(Instant::now);
                match retry {
                    Retry::StaleAfterSpin => {
                        backoff.spin();
                        current = actual;
                    }
                    Retry::AtOnce => current = actual,
                    Retry::SpinThenLoad => {
                        backoff.spin();
                        current = entry.state.load(Ordering::Relaxed);
                    }
                    Retry::LongSpinThenLoad => {
                        for _ in 0..1u32 << failures.min(8) {
                            std::hint::spin_loop();
                        }
                        current = entry.state.load(Ordering::Relaxed);
                    }
                    Retry::FetchAdd => unreachable!("no CAS"),
                }
                failures += 1;
            }
        }
    }
}

/// What one cell measured.
struct Cell {
    per_second: f64,
    fairness: f64,
    longest: Duration,
}

/// `threads` threads deciding on one word for `run`.
fn cell(threads: usize, retry: Retry, run: Duration) -> Cell {
    let key = *b"tenant-00042:/api/orders";
    let entry = Entry {
        key,
        state: AtomicU64::new(0),
    };
    let (per_thread, elapsed) = until_stopped(threads, run, |_, stop| {
        let key = black_box(key);
        let (mut decisions, mut longest) = (0u64, Duration::ZERO);
        // Relaxed: the flag carries no data.
        while !stop.load(Ordering::Relaxed) {
            for _ in 0..64 {
                if let Some(waited) = decide(&entry, &key, retry) {
                    longest = longest.max(waited);
                }
            }
            decisions += 64;
        }
        (decisions, longest)
    });
    let counts: Vec<(u64, u64)> = per_thread.iter().map(|t| (t.0, t.0)).collect();
    let run = Run::of(threads, &counts, elapsed);
    Cell {
        per_second: run.per_second(),
        fairness: run.fairness(),
        longest: per_thread.iter().map(|t| t.1).max().unwrap_or_default(),
    }
}

fn main() {
    let threads: Vec<usize> = match std::env::args().nth(1) {
        None => vec![1, 2, 4, 8, 16],
        Some(list) => match list.split(',').map(str::parse).collect() {
            Ok(counts) => counts,
            Err(_) => {
                eprintln!("hot_word: expected thread counts such as 2,4,8");
                std::process::exit(2);
            }
        },
    };
    let upkeep_stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let origin = Instant::now();
            while !upkeep_stop.load(Ordering::Relaxed) {
                let nanos = u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX);
                NOW.store(nanos.saturating_add(1), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        println!("| threads | retry | M decisions/s | fairness | longest lost race |");
        println!("|---:|---|---:|---:|---:|");
        for &count in &threads {
            for retry in POLICIES {
                // The median of three cells by throughput.
                let mut cells: Vec<Cell> = (0..3)
                    .map(|_| cell(count, retry, Duration::from_millis(150)))
                    .collect();
                cells.sort_by(|a, b| a.per_second.total_cmp(&b.per_second));
                let c = &cells[1];
                println!(
                    "| {count} | {retry:?} | {:.1} | {:.2} | {:.1?} |",
                    c.per_second / 1e6,
                    c.fairness,
                    c.longest
                );
            }
        }
        upkeep_stop.store(true, Ordering::Relaxed);
    });
}
