//! The multi-thread harness: several threads hammer one shared limiter,
//! each picking keys with its own generator.

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::keys::Pick;

/// What one run did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Run {
    /// Threads that ran.
    pub threads: usize,
    /// Decisions made, all threads together.
    pub decisions: u64,
    /// Decisions that admitted the request.
    pub admitted: u64,
    /// The fewest decisions one thread made.
    pub fewest: u64,
    /// The most decisions one thread made.
    pub most: u64,
    /// Wall time from the common start to the last thread's end.
    pub elapsed: Duration,
}

impl Run {
    /// The run of `threads` threads that made `per_thread` (decisions,
    /// admitted) in `elapsed`.
    pub fn of(threads: usize, per_thread: &[(u64, u64)], elapsed: Duration) -> Run {
        let decisions = per_thread.iter().map(|t| t.0);
        Run {
            threads,
            decisions: decisions.clone().sum(),
            admitted: per_thread.iter().map(|t| t.1).sum(),
            fewest: decisions.clone().min().unwrap_or(0),
            most: decisions.max().unwrap_or(0),
            elapsed,
        }
    }

    /// Decisions per second, all threads together.
    pub fn per_second(&self) -> f64 {
        self.decisions as f64 / self.elapsed.as_secs_f64()
    }

    /// The slowest thread's decisions over the fastest's: near 1 when every
    /// thread got through alike, near 0 when one was starved.
    pub fn fairness(&self) -> f64 {
        self.fewest as f64 / self.most.max(1) as f64
    }
}

/// Decisions between two looks at the stop flag.
const BATCH: u64 = 256;

/// Runs `threads` threads for about `duration`, each calling `allow` on keys
/// picked from `keys`.
pub fn run_for<K: Sync>(
    threads: usize,
    duration: Duration,
    keys: &[K],
    allow: impl Fn(&K) -> bool + Sync,
) -> Run {
    let (per_thread, elapsed) = until_stopped(threads, duration, |t, stop| {
        let mut pick = Pick::new(0x5eed + t as u64 * 0x1234_5678_9abc);
        let (mut decisions, mut admitted) = (0, 0);
        // Relaxed: the flag carries no data, only "time is up".
        while !stop.load(Ordering::Relaxed) {
            for _ in 0..BATCH {
                admitted += u64::from(allow(&keys[pick.below(keys.len())]));
            }
            decisions += BATCH;
        }
        (decisions, admitted)
    });
    Run::of(threads, &per_thread, elapsed)
}

/// Starts `threads` threads together, each running `work(t, &stop)` for its
/// index `t` until `stop` is set, about `duration` after the common start;
/// returns each thread's result and the wall time from that start until the
/// last one ended.
pub fn until_stopped<T: Send>(
    threads: usize,
    duration: Duration,
    work: impl Fn(usize, &AtomicBool) -> T + Sync,
) -> (Vec<T>, Duration) {
    let stop = AtomicBool::new(false);
    let start = Barrier::new(threads + 1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (stop, start, work) = (&stop, &start, &work);
                scope.spawn(move || {
                    start.wait();
                    work(t, stop)
                })
            })
            .collect();
        start.wait();
        let began = Instant::now();
        std::thread::sleep(duration);
        // Relaxed: the flag carries no data; `join` orders the results.
        stop.store(true, Ordering::Relaxed);
        let results = workers
            .into_iter()
            .map(|w| w.join().expect("worker panicked"))
            .collect();
        (results, began.elapsed())
    })
}

/// Runs `threads` threads that make `per_thread` decisions each; for
/// criterion's `iter_custom`.
pub fn run_ops<K: Sync>(
    threads: usize,
    per_thread: u64,
    keys: &[K],
    allow: impl Fn(&K) -> bool + Sync,
) -> Run {
    run_counted(threads, per_thread, |t| {
        let mut pick = Pick::new(0x5eed + t * 0x1234_5678_9abc);
        (0..per_thread)
            .map(|_| u64::from(allow(&keys[pick.below(keys.len())])))
            .sum()
    })
}

/// Runs `threads` threads that each make `per_thread` first requests for
/// keys no thread asked for before (thread `t` takes the keys
/// `first + t * per_thread ..`); for criterion's `iter_custom`.
pub fn run_new_keys(
    threads: usize,
    per_thread: u64,
    first: u64,
    allow: impl Fn(u64) -> bool + Sync,
) -> Run {
    run_counted(threads, per_thread, |t| {
        let keys = first + t * per_thread..first + (t + 1) * per_thread;
        keys.map(|key| u64::from(allow(key))).sum()
    })
}

/// Starts `threads` threads together, each running `work(t)` for its index
/// `t` (which makes `per_thread` decisions and returns how many admitted),
/// and times them from the common start to the last one's end.
fn run_counted(threads: usize, per_thread: u64, work: impl Fn(u64) -> u64 + Sync) -> Run {
    let start = Barrier::new(threads + 1);
    let (admitted, elapsed) = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads as u64)
            .map(|t| {
                let (start, work) = (&start, &work);
                scope.spawn(move || {
                    start.wait();
                    work(t)
                })
            })
            .collect();
        start.wait();
        let began = Instant::now();
        let admitted: u64 = workers
            .into_iter()
            .map(|w| w.join().expect("worker panicked"))
            .sum();
        (admitted, began.elapsed())
    });
    Run {
        threads,
        decisions: per_thread * threads as u64,
        admitted,
        fewest: per_thread,
        most: per_thread,
        elapsed,
    }
}
