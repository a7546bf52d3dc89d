//! The thread sweep: 1, 2, 4 and 8 threads (or the counts `--threads`
//! names) share one limiter for a fixed
//! time, on one hot key and on 10,000 keys; plus the saturation checks that
//! keep a fast wrong answer from winning.

use std::time::{Duration, Instant};

use tollgate::{
    FixedWindow, MonotonicClock, RateLimiter, SlidingWindowCounter, SlidingWindowLog, TokenBucket,
};

use crate::support::contenders::{Spec, governor_keyed};
use crate::support::keyed_floor::KeyedFloor;
use crate::support::keys::string_keys;
use crate::support::median::median;
use crate::support::threads::{Run, run_for};

/// Thread counts swept unless `--threads` names others.
pub const DEFAULT_THREADS: [usize; 4] = [1, 2, 4, 8];

/// The contenders, in table order.
pub const NAMES: [&str; 5] = [
    "tollgate TokenBucket",
    "governor keyed",
    "std Mutex<HashMap>",
    "parking_lot Mutex<HashMap>",
    "keyed floor (not a limiter)",
];

/// Median decisions per second for one key set, indexed `[contender][threads]`.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The key set's label.
    pub label: &'static str,
    /// The thread counts swept, in order.
    pub threads: Vec<usize>,
    /// Decisions per second.
    pub per_second: Vec<Vec<f64>>,
    /// The median over slices of the slowest thread's decisions over the
    /// fastest's ([`Run::fairness`]), indexed like `per_second`.
    pub fairness: Vec<Vec<f64>>,
}

/// Slices each contender's time in a cell is cut into. The contenders take
/// turns slice by slice, so a change in the machine's speed that lasts a
/// second or more (seen here: whole seconds in which tollgate and governor
/// both made about half their usual decisions on two threads) falls on all
/// of them alike instead of on whichever ran in that stretch.
const SLICES: u32 = 8;

/// Rounds for a thread count the report's targets and ceilings do not read
/// (all but one and two threads), when fewer than asked. Their medians are
/// of three rounds rather than five, which keeps the run under a minute with
/// a 16-thread row added.
const OTHER_ROUNDS: usize = 3;

/// Rounds run at `count` threads when the sweep asks for `rounds`.
fn rounds_at(count: usize, rounds: usize) -> usize {
    if count <= 2 {
        rounds
    } else {
        rounds.min(OTHER_ROUNDS)
    }
}

/// Sweeps every contender on `keys` at each of `threads`, `rounds` times
/// `run` each (in [`SLICES`] turns; fewer rounds past two threads, see
/// [`OTHER_ROUNDS`]).
///
/// The caller makes the keys before the earlier sections run: made here,
/// after them, their buffers landed wherever those sections had freed
/// memory, and every contender then ran slower on two threads than on one
/// (all of them about 1.7-2x faster on two threads with the keys made
/// first, or each given a cache line of its own).
pub fn sweep(
    label: &'static str,
    keys: &[String],
    threads: &[usize],
    run: Duration,
    rounds: usize,
) -> Sweep {
    let spec = Spec::DEEP_BUCKET;
    let tollgate: TokenBucket = TokenBucket::new(spec.tollgate());
    let governor = governor_keyed::<String>(spec);
    let std_mutex = spec.std_bucket::<String>();
    let parking_lot = spec.parking_lot_bucket::<String>();
    let (floor_clock, floor) = (MonotonicClock::new(), KeyedFloor::new(keys));
    for key in keys {
        // Track every key first: the sweep times the hit path.
        let _ = tollgate.allow(key);
        let _ = governor.check_key(key);
        std_mutex.allow(key);
        parking_lot.allow(key);
    }
    let slice = run / SLICES;
    let mut samples = vec![vec![Vec::new(); threads.len()]; NAMES.len()];
    let mut shares = samples.clone();
    for round in 0..rounds {
        for (t, &count) in threads.iter().enumerate() {
            if round >= rounds_at(count, rounds) {
                continue;
            }
            // Each contender's slices summed into one run.
            let empty = Run {
                threads: count,
                ..Run::default()
            };
            let mut cells = [empty; NAMES.len()];
            for _ in 0..SLICES {
                let runs = [
                    run_for(count, slice, keys, |k| tollgate.allow(k)),
                    run_for(count, slice, keys, |k| governor.check_key(k).is_ok()),
                    run_for(count, slice, keys, |k| std_mutex.allow(k)),
                    run_for(count, slice, keys, |k| parking_lot.allow(k)),
                    run_for(count, slice, keys, |k| floor.allow(&floor_clock, k)),
                ];
                for (c, result) in runs.iter().enumerate() {
                    // A bucket of a billion tokens cannot run dry here.
                    assert_eq!(
                        result.admitted, result.decisions,
                        "{} denied under a generous quota ({label}, {count} threads)",
                        NAMES[c]
                    );
                    assert!(result.decisions > 0, "{} made no decision", NAMES[c]);
                    shares[c][t].push(result.fairness());
                    cells[c].decisions += result.decisions;
                    cells[c].admitted += result.admitted;
                    cells[c].elapsed += result.elapsed;
                }
            }
            for (c, cell) in cells.iter().enumerate() {
                samples[c][t].push(cell.per_second());
            }
        }
    }
    Sweep {
        label,
        threads: threads.to_vec(),
        per_second: medians(samples),
        fairness: medians(shares),
    }
}

/// Each cell's median, for cells indexed `[contender][threads]`.
fn medians(cells: Vec<Vec<Vec<f64>>>) -> Vec<Vec<f64>> {
    cells
        .into_iter()
        .map(|per_threads| {
            per_threads
                .into_iter()
                .map(|mut s| median(&mut s))
                .collect()
        })
        .collect()
}

/// A saturation check's outcome.
#[derive(Clone, Debug)]
pub struct Saturation {
    /// Which limiter.
    pub name: &'static str,
    /// Requests admitted.
    pub admitted: u64,
    /// The least a correct limiter admits in the run.
    pub low: u64,
    /// The most a correct limiter admits in the run.
    pub high: u64,
    /// Decisions made.
    pub decisions: u64,
}

/// Two threads hammer one key far beyond its quota for `run`; the admitted
/// count must match the quota, whatever the speed. The upper bound is the
/// quota over the limiter's whole life; the lower bound allows the threads
/// to be off the CPU for three quarters of the run, so a loaded machine
/// does not fail it, while a limiter that denies everything still does.
pub fn saturation_checks(run: Duration) -> Vec<Saturation> {
    let key = string_keys(1);
    // Token buckets: `burst` at once, then `rate` a second.
    let bucket = Spec {
        limit: 20_000,
        window: Duration::from_secs(1),
        burst: 1_000,
    };
    let bucket_bounds = |r: &Run, since_created: Duration| {
        let (rate, burst) = (bucket.limit as f64, bucket.burst as f64);
        let low = burst + 0.25 * rate * r.elapsed.as_secs_f64();
        let high = burst + 1.05 * rate * since_created.as_secs_f64() + 2.0;
        (low as u64, high as u64)
    };
    // Windows: `limit` per 10 ms window.
    let window = Spec {
        limit: 200,
        window: Duration::from_millis(10),
        burst: 200,
    };
    let window_bounds = |r: &Run, since_created: Duration| {
        let per = window.window.as_secs_f64();
        let limit = window.limit as f64;
        let low = limit * ((0.25 * r.elapsed.as_secs_f64() / per).floor() - 1.0).max(1.0);
        let high = limit * ((since_created.as_secs_f64() / per).ceil() + 1.0);
        (low as u64, high as u64)
    };
    let mut out = Vec::new();
    let mut check = |name: &'static str,
                     bounds: &dyn Fn(&Run, Duration) -> (u64, u64),
                     allow: &(dyn Fn(&String) -> bool + Sync),
                     created: Instant| {
        let result = run_for(2, run, &key, allow);
        let (low, high) = bounds(&result, created.elapsed());
        out.push(Saturation {
            name,
            admitted: result.admitted,
            low,
            high,
            decisions: result.decisions,
        });
    };
    let created = Instant::now();
    let limiter: TokenBucket = TokenBucket::new(bucket.tollgate());
    check(
        "tollgate TokenBucket",
        &bucket_bounds,
        &|k| limiter.allow(k),
        created,
    );
    let created = Instant::now();
    let limiter = governor_keyed::<String>(bucket);
    check(
        "governor keyed",
        &bucket_bounds,
        &|k| limiter.check_key(k).is_ok(),
        created,
    );
    let created = Instant::now();
    let limiter = bucket.std_bucket::<String>();
    check(
        "std Mutex<HashMap> bucket",
        &bucket_bounds,
        &|k| limiter.allow(k),
        created,
    );
    let created = Instant::now();
    let limiter = bucket.parking_lot_bucket::<String>();
    check(
        "parking_lot Mutex<HashMap> bucket",
        &bucket_bounds,
        &|k| limiter.allow(k),
        created,
    );
    let created = Instant::now();
    let limiter: FixedWindow = FixedWindow::new(window.tollgate());
    check(
        "tollgate FixedWindow",
        &window_bounds,
        &|k| limiter.allow(k),
        created,
    );
    let created = Instant::now();
    let limiter: SlidingWindowCounter = SlidingWindowCounter::new(window.tollgate());
    check(
        "tollgate SlidingWindowCounter",
        &window_bounds,
        &|k| limiter.allow(k),
        created,
    );
    let created = Instant::now();
    let limiter: SlidingWindowLog = SlidingWindowLog::new(window.tollgate());
    check(
        "tollgate SlidingWindowLog",
        &window_bounds,
        &|k| limiter.allow(k),
        created,
    );
    let created = Instant::now();
    let limiter = window.std_window::<String>();
    check(
        "std Mutex<HashMap> window",
        &window_bounds,
        &|k| limiter.allow(k),
        created,
    );
    let created = Instant::now();
    let limiter = window.std_log::<String>();
    check(
        "std Mutex<HashMap> log",
        &window_bounds,
        &|k| limiter.allow(k),
        created,
    );
    out
}
