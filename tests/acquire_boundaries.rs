//! Deterministic wait times of `acquire` at the boundaries, for every
//! algorithm, driven by a manual clock.
//!
//! Each expected wait is worked out by hand from the algorithm's rule (see
//! the comment at each limiter), not read off the implementation.

use std::time::Duration;

use tollgate::wait::{Acquire, ManualSleeper, WaitError, Waiter};
use tollgate::{
    DirectLimiter, FixedWindow, FixedWindowRule, InsufficientCapacity, ManualClock, Quota,
    RateLimiter, SlidingWindowCounter, SlidingWindowLog, TokenBucket, TokenBucketRule,
};

const MS: Duration = Duration::from_millis(1);

/// One limiter set up `wait` short of `cost` units, with its clock.
struct Case<L> {
    name: &'static str,
    limiter: L,
    clock: ManualClock,
    /// Units one call asks for in the "short" scenarios.
    cost: u64,
    /// How long `cost` units take to come free, by the algorithm's rule.
    wait: Duration,
    /// A cost that fits right now.
    fits_now: u64,
    /// The largest cost the limiter admits at once.
    max: u64,
}

fn waiter(clock: &ManualClock) -> Waiter<ManualSleeper> {
    Waiter::with_sleeper(ManualSleeper::new(clock.clone()))
}

/// The remaining-units figure of a peek, to show a failure changed nothing.
fn peek<L: RateLimiter<str>>(limiter: &L) -> (bool, u64, Duration) {
    let d = limiter.check_n("k", 0).unwrap();
    (d.allowed(), d.remaining(), d.retry_after())
}

/// Token bucket, 10/s, burst 3: `T = 100 ms`. Two tokens spent leaves one;
/// two tokens are then one short, due in one interval.
fn token_bucket() -> Case<TokenBucket<String, ManualClock>> {
    let clock = ManualClock::new();
    let limiter = TokenBucket::with_clock(Quota::per_second(10).with_burst(3), clock.clone());
    assert!(limiter.allow_n("k", 2));
    Case {
        name: "token bucket",
        limiter,
        clock,
        cost: 2,
        wait: 100 * MS,
        fits_now: 1,
        max: 3,
    }
}

/// Fixed window, 3 per second: at 250 ms three units fill the window, so
/// any unit waits for the window to end, 750 ms later.
fn fixed_window() -> Case<FixedWindow<String, ManualClock>> {
    let clock = ManualClock::new();
    let limiter = FixedWindow::with_clock(Quota::per_second(3), clock.clone());
    clock.set(250 * MS);
    assert!(limiter.allow_n("k", 2));
    Case {
        name: "fixed window",
        limiter,
        clock,
        cost: 2,
        wait: 750 * MS,
        fits_now: 1,
        max: 3,
    }
}

/// Sliding log, 3 per second: one unit at 0 ms, one at 200 ms; at 500 ms one
/// more fits, but two need the unit from 0 ms to leave, at 1000 ms.
fn sliding_log() -> Case<SlidingWindowLog<String, ManualClock>> {
    let clock = ManualClock::new();
    let limiter = SlidingWindowLog::with_clock(Quota::per_second(3), clock.clone());
    assert!(limiter.allow("k"));
    clock.set(200 * MS);
    assert!(limiter.allow("k"));
    clock.set(500 * MS);
    Case {
        name: "sliding log",
        limiter,
        clock,
        cost: 2,
        wait: 500 * MS,
        fits_now: 1,
        max: 3,
    }
}

/// Sliding counter, 4 per second: two units in window 0, then at the start
/// of window 1 the previous count weighs `2·(W - e)/W`, so two more fit.
/// Three need `2·(W - e) + 3·W ≤ 4·W`, so `e ≥ W/2`: 500 ms.
fn sliding_counter() -> Case<SlidingWindowCounter<String, ManualClock>> {
    let clock = ManualClock::new();
    let limiter = SlidingWindowCounter::with_clock(Quota::per_second(4), clock.clone());
    assert!(limiter.allow_n("k", 2));
    clock.set(1000 * MS);
    Case {
        name: "sliding counter",
        limiter,
        clock,
        cost: 3,
        wait: 500 * MS,
        fits_now: 2,
        max: 4,
    }
}

fn exactly_enough<L: Acquire<str>>(case: Case<L>) {
    let start = case.clock.elapsed();
    let waited = case
        .limiter
        .acquire_with(&waiter(&case.clock), "k", case.fits_now, Duration::ZERO)
        .unwrap_or_else(|e| panic!("{}: {e}", case.name));
    assert_eq!(waited, Duration::ZERO, "{}", case.name);
    assert_eq!(case.clock.elapsed(), start, "{}: no sleep", case.name);
}

fn one_short_waits_exactly<L: Acquire<str>>(case: Case<L>, timeout: Duration) {
    let start = case.clock.elapsed();
    let waited = case
        .limiter
        .acquire_with(&waiter(&case.clock), "k", case.cost, timeout)
        .unwrap_or_else(|e| panic!("{}: {e}", case.name));
    assert_eq!(waited, case.wait, "{}", case.name);
    assert_eq!(case.clock.elapsed(), start + case.wait, "{}", case.name);
}

fn over_capacity_fails_at_once<L: Acquire<str>>(case: Case<L>) {
    let start = case.clock.elapsed();
    let before = peek(&case.limiter);
    let error = case
        .limiter
        .acquire_with(&waiter(&case.clock), "k", case.max + 1, Duration::MAX)
        .unwrap_err();
    assert_eq!(
        error,
        WaitError::Capacity(InsufficientCapacity {
            requested: case.max + 1,
            max: case.max
        }),
        "{}",
        case.name
    );
    assert_eq!(case.clock.elapsed(), start, "{}: no sleep", case.name);
    assert_eq!(peek(&case.limiter), before, "{}: nothing spent", case.name);
}

fn shorter_timeout_fails_at_once<L: Acquire<str>>(case: Case<L>) {
    let start = case.clock.elapsed();
    let before = peek(&case.limiter);
    let timeout = case.wait - Duration::from_nanos(1);
    let error = case
        .limiter
        .acquire_with(&waiter(&case.clock), "k", case.cost, timeout)
        .unwrap_err();
    assert_eq!(
        error,
        WaitError::Timeout {
            needed: case.wait,
            left: timeout
        },
        "{}",
        case.name
    );
    assert_eq!(case.clock.elapsed(), start, "{}: no sleep", case.name);
    assert_eq!(
        peek(&case.limiter),
        before,
        "{}: nothing reserved",
        case.name
    );
}

macro_rules! boundary_tests {
    ($($module:ident => $case:ident),* $(,)?) => {$(
        mod $module {
            use super::*;

            #[test]
            fn exactly_enough_units_pass_without_sleeping() {
                exactly_enough($case());
            }

            #[test]
            fn one_short_waits_exactly_the_computed_time() {
                one_short_waits_exactly($case(), Duration::from_secs(60));
            }

            #[test]
            fn a_timeout_equal_to_the_wait_is_enough() {
                let case = $case();
                let wait = case.wait;
                one_short_waits_exactly(case, wait);
            }

            #[test]
            fn a_cost_over_capacity_fails_at_once() {
                over_capacity_fails_at_once($case());
            }

            #[test]
            fn a_timeout_shorter_than_the_wait_fails_at_once() {
                shorter_timeout_fails_at_once($case());
            }
        }
    )*};
}

boundary_tests!(
    token_bucket_waits => token_bucket,
    fixed_window_waits => fixed_window,
    sliding_log_waits => sliding_log,
    sliding_counter_waits => sliding_counter,
);

#[test]
fn a_peek_waits_for_one_unit_and_takes_nothing() {
    let case = token_bucket();
    assert!(case.limiter.allow("k")); // empty now
    let waited = case
        .limiter
        .acquire_with(&waiter(&case.clock), "k", 0, Duration::from_secs(1))
        .unwrap();
    assert_eq!(waited, 100 * MS);
    assert_eq!(peek(&case.limiter), (true, 1, Duration::ZERO));
}

#[test]
fn direct_limiters_wait_too() {
    let clock = ManualClock::new();
    let bucket =
        DirectLimiter::<TokenBucketRule, _>::with_clock(Quota::per_second(4), clock.clone());
    assert!(bucket.check_n(4).unwrap().allowed());
    // Four tokens per second: one is due in 250 ms.
    let waited = bucket
        .acquire_with(&waiter(&clock), &(), 1, Duration::from_secs(1))
        .unwrap();
    assert_eq!(waited, 250 * MS);

    let window =
        DirectLimiter::<FixedWindowRule, _>::with_clock(Quota::per_second(1), clock.clone());
    assert!(window.check_n(1).unwrap().allowed());
    // Clock at 250 ms: the window ends at 1 s.
    let waited = window
        .acquire_with(&waiter(&clock), &(), 1, Duration::from_secs(1))
        .unwrap();
    assert_eq!(waited, 750 * MS);
}

#[test]
fn u64_keys_and_shared_pointers_wait_the_same() {
    let clock = ManualClock::new();
    let limiter: std::sync::Arc<TokenBucket<u64, ManualClock>> =
        std::sync::Arc::new(TokenBucket::with_clock(Quota::per_second(2), clock.clone()));
    assert!(limiter.allow_n(&7, 2));
    let waited =
        Acquire::<u64>::acquire_with(&limiter, &waiter(&clock), &7, 2, Duration::MAX).unwrap();
    assert_eq!(waited, Duration::from_secs(1));
}
