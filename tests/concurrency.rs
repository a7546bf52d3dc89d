//! Real threads on one key: with time frozen exactly the burst passes; with
//! time moving the admitted units never exceed what the quota allows.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use tollgate::{
    Algorithm, Clock, DirectLimiter, FixedWindowRule, KeyedLimiter, ManualClock, Quota,
    RateLimiter, SlidingWindowCounterRule, SlidingWindowLogRule, TokenBucketRule,
};

const THREADS: usize = 6;

type Limiter<A> = KeyedLimiter<A, u64, ManualClock>;

/// Runs `work(thread index)` on `THREADS` threads released together.
fn on_threads<T: Send + 'static>(work: impl Fn(usize) -> T + Send + Sync + 'static) -> Vec<T> {
    let work = Arc::new(work);
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|i| {
            let (work, start) = (work.clone(), start.clone());
            thread::spawn(move || {
                start.wait();
                work(i)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

/// Frozen time: every thread hammers keys 0..4 (new keys, so insertion races
/// too); each key admits exactly `limit` single units.
fn frozen_single_units<A: Algorithm>(quota: Quota) {
    let limiter = Arc::new(Limiter::<A>::with_clock(quota, ManualClock::new()));
    let attempts = quota.burst().max(quota.limit()) * 3;
    let per_thread = {
        let limiter = limiter.clone();
        on_threads(move |_| {
            let mut admitted = [0u64; 4];
            for _ in 0..attempts {
                for (key, count) in admitted.iter_mut().enumerate() {
                    if limiter.allow(&(key as u64)) {
                        *count += 1;
                    }
                }
            }
            admitted
        })
    };
    let expected = limiter.rule().limit();
    for key in 0..4 {
        let total: u64 = per_thread.iter().map(|counts| counts[key]).sum();
        assert_eq!(total, expected, "key {key}, quota {quota}");
    }
}

/// Frozen time, mixed costs: units admitted plus units left equals the burst.
fn frozen_weighted<A: Algorithm>(quota: Quota) {
    let limiter = Arc::new(Limiter::<A>::with_clock(quota, ManualClock::new()));
    let per_thread = {
        let limiter = limiter.clone();
        on_threads(move |i| {
            let mut units = 0;
            for step in 0..500u64 {
                let cost = (step + i as u64) % 4;
                if limiter.check_n(&1, cost).unwrap().allowed() {
                    units += cost;
                }
            }
            units
        })
    };
    let admitted: u64 = per_thread.iter().sum();
    let left = limiter.check_n(&1, 0).unwrap().remaining();
    assert_eq!(admitted + left, limiter.rule().limit(), "quota {quota}");
}

fn frozen<A: Algorithm>() {
    frozen_single_units::<A>(Quota::per_hour(500));
    frozen_single_units::<A>(Quota::per_second(1));
    frozen_weighted::<A>(Quota::per_hour(300));
}

#[test]
fn frozen_time_admits_exactly_the_burst_token_bucket() {
    frozen::<TokenBucketRule>();
    frozen_single_units::<TokenBucketRule>(Quota::per_hour(10).with_burst(700));
}

#[test]
fn frozen_time_admits_exactly_the_limit_fixed_window() {
    frozen::<FixedWindowRule>();
}

#[test]
fn frozen_time_admits_exactly_the_limit_sliding_counter() {
    frozen::<SlidingWindowCounterRule>();
}

#[test]
fn frozen_time_admits_exactly_the_limit_sliding_log() {
    frozen::<SlidingWindowLogRule>();
}

#[test]
fn frozen_time_direct_limiter_admits_exactly_the_burst() {
    let limiter = Arc::new(DirectLimiter::<TokenBucketRule, _>::with_clock(
        Quota::per_hour(777),
        ManualClock::new(),
    ));
    let counts = {
        let limiter = limiter.clone();
        on_threads(move |_| {
            (0..1_000)
                .filter(|_| (*limiter).check_n(1).unwrap().allowed())
                .count()
        })
    };
    assert_eq!(counts.iter().sum::<usize>(), 777);
}

/// One admission: the clock before and after the call, and its cost.
#[derive(Clone, Copy, Debug)]
struct Admission {
    before: u64,
    after: u64,
    cost: u64,
}

/// Workers hammer key 1 while another thread advances the clock `steps`
/// times by `step`; returns every admission and the final time.
fn moving_time<A: Algorithm>(quota: Quota, step: Duration, steps: u32) -> (Vec<Admission>, u64) {
    let clock = ManualClock::new();
    let limiter = Arc::new(Limiter::<A>::with_clock(quota, clock.clone()));
    let done = Arc::new(AtomicBool::new(false));
    let advancer = {
        let (clock, done) = (clock.clone(), done.clone());
        thread::spawn(move || {
            for _ in 0..steps {
                clock.advance(step);
                thread::sleep(Duration::from_micros(20));
            }
            // Relaxed: a stop flag; the joins order the results.
            done.store(true, Ordering::Relaxed);
        })
    };
    let max = limiter.rule().max_cost();
    let workers: Vec<_> = (0..THREADS - 2)
        .map(|i| {
            let (limiter, clock, done) = (limiter.clone(), clock.clone(), done.clone());
            thread::spawn(move || {
                let mut admitted = Vec::new();
                let mut n = i as u64;
                while !done.load(Ordering::Relaxed) {
                    n += 1;
                    let cost = 1 + n % 3 % max;
                    let before = clock.now_nanos();
                    let decision = limiter.check_n(&1, cost).unwrap();
                    let after = clock.now_nanos();
                    if decision.allowed() {
                        admitted.push(Admission {
                            before,
                            after,
                            cost,
                        });
                    }
                }
                admitted
            })
        })
        .collect();
    advancer.join().unwrap();
    let admitted = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    (admitted, clock.now_nanos())
}

fn units(admitted: &[Admission]) -> u64 {
    admitted.iter().map(|a| a.cost).sum()
}

/// Units of admissions that certainly fell in window `k` (the clock read the
/// same window before and after the call), per window.
fn per_window(admitted: &[Admission], window: u64) -> std::collections::HashMap<u64, u64> {
    let mut counts = std::collections::HashMap::new();
    for a in admitted {
        if a.before / window == a.after / window {
            *counts.entry(a.before / window).or_default() += a.cost;
        }
    }
    counts
}

/// The most units of admissions that certainly fell inside one span
/// `[s, s + window)`, over every start `s` at an admission.
fn max_in_any_span(admitted: &[Admission], window: u64) -> u64 {
    admitted
        .iter()
        .map(|start| {
            let s = start.before;
            admitted
                .iter()
                .filter(|a| a.before >= s && a.after < s + window)
                .map(|a| a.cost)
                .sum()
        })
        .max()
        .unwrap_or(0)
}

const STEP: Duration = Duration::from_millis(1);
const STEPS: u32 = 400;

#[test]
fn moving_time_token_bucket_stays_within_burst_plus_refill() {
    // 50/s with burst 20: T = 20 ms.
    let quota = Quota::per_second(50).with_burst(20);
    let (admitted, end) = moving_time::<TokenBucketRule>(quota, STEP, STEPS);
    assert_eq!(end, 400 * 1_000_000);
    let bound = 20 + end / 20_000_000;
    let total = units(&admitted);
    assert!(total <= bound, "{total} > {bound}");
    assert!(total >= 20, "the initial burst alone gives 20, got {total}");
}

#[test]
fn moving_time_fixed_window_stays_within_each_window() {
    // 10 per 10 ms: 40 windows over the run.
    let quota = Quota::new(10, Duration::from_millis(10)).unwrap();
    let (admitted, end) = moving_time::<FixedWindowRule>(quota, STEP, STEPS);
    let window = quota.window_nanos();
    for (index, count) in per_window(&admitted, window) {
        assert!(count <= 10, "window {index}: {count}");
    }
    assert!(units(&admitted) <= 10 * (end / window + 1));
}

#[test]
fn moving_time_sliding_log_stays_within_every_span() {
    let quota = Quota::new(10, Duration::from_millis(10)).unwrap();
    let (admitted, end) = moving_time::<SlidingWindowLogRule>(quota, STEP, STEPS);
    let window = quota.window_nanos();
    let most = max_in_any_span(&admitted, window);
    assert!(most <= 10, "{most} units inside one window-long span");
    assert!(units(&admitted) <= 10 * (end / window + 1));
}

#[test]
fn moving_time_sliding_counter_stays_within_its_approximation() {
    // `cur ≤ limit` in each fixed window; a sliding span overlaps two
    // windows, so at most twice the limit.
    let quota = Quota::new(10, Duration::from_millis(10)).unwrap();
    let (admitted, end) = moving_time::<SlidingWindowCounterRule>(quota, STEP, STEPS);
    let window = quota.window_nanos();
    for (index, count) in per_window(&admitted, window) {
        assert!(count <= 10, "window {index}: {count}");
    }
    let most = max_in_any_span(&admitted, window);
    assert!(most <= 20, "{most} units inside one window-long span");
    assert!(units(&admitted) <= 10 * (end / window + 1));
}
