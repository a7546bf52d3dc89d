//! Sliding window log boundaries on a manual clock: a unit admitted at `t`
//! counts while `now < t + window`, so the limit holds over every span.

use std::time::Duration;

use tollgate::{InsufficientCapacity, ManualClock, Quota, RateLimiter, SlidingWindowLog};

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000 * MS;

fn log(quota: Quota) -> (SlidingWindowLog<String, ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    (SlidingWindowLog::with_clock(quota, clock.clone()), clock)
}

fn nanos(n: u64) -> Duration {
    Duration::from_nanos(n)
}

/// Units at 0, 300 ms and 600 ms under 3/s; the clock is left at 600 ms.
fn three_spread_units() -> (SlidingWindowLog<String, ManualClock>, ManualClock) {
    let (limiter, clock) = log(Quota::per_second(3));
    for expected_remaining in [2, 1, 0] {
        let d = limiter.check("k");
        assert!(d.allowed());
        assert_eq!((d.limit(), d.remaining()), (3, expected_remaining));
        // Empty one window after the newest unit.
        assert_eq!(d.reset_after_nanos(), SEC);
        if expected_remaining > 0 {
            clock.advance(nanos(300 * MS));
        }
    }
    (limiter, clock)
}

#[test]
fn a_full_log_waits_for_its_oldest_unit() {
    let (limiter, clock) = three_spread_units();
    clock.advance(nanos(100 * MS));
    let d = limiter.check("k");
    assert!(!d.allowed());
    assert_eq!(d.remaining(), 0);
    // At 700 ms: the unit from 0 expires at 1 s, the newest at 1.6 s.
    assert_eq!(d.retry_after_nanos(), 300 * MS);
    assert_eq!(d.reset_after_nanos(), 900 * MS);
}

#[test]
fn a_unit_stops_counting_exactly_one_window_later() {
    let (limiter, clock) = three_spread_units();
    clock.set(nanos(SEC - 1));
    let d = limiter.check("k");
    assert!(!d.allowed());
    assert_eq!(d.retry_after_nanos(), 1);
    clock.advance(nanos(1));
    // At 1 s only the unit from 0 has expired: one slot, not a fresh window.
    let d = limiter.check("k");
    assert!(d.allowed());
    assert_eq!(d.remaining(), 0);
    assert!(!limiter.allow("k"));
}

#[test]
fn weighted_cost_waits_until_enough_units_expire() {
    let (limiter, clock) = three_spread_units();
    clock.set(nanos(SEC));
    assert!(limiter.allow("k"));
    clock.set(nanos(1_300 * MS));
    // Counted at 1.3 s: the units from 600 ms and 1 s.
    let d = limiter.check_n("k", 2).unwrap();
    assert!(!d.allowed());
    assert_eq!(d.remaining(), 1);
    // Two fit once the 600 ms unit expires at 1.6 s.
    assert_eq!(d.retry_after_nanos(), 300 * MS);
    // Empty when the 1 s unit expires at 2 s.
    assert_eq!(d.reset_after_nanos(), 700 * MS);
    assert!(limiter.allow_n("k", 1));
    clock.set(nanos(1_600 * MS));
    let d = limiter.check_n("k", 1).unwrap();
    assert!(d.allowed());
    assert_eq!(d.remaining(), 0);
}

#[test]
fn peeks_and_denials_do_not_consume() {
    let (limiter, clock) = log(Quota::per_second(3));
    let d = limiter.check_n("k", 0).unwrap();
    assert!(d.allowed());
    assert_eq!((d.remaining(), d.reset_after_nanos()), (3, 0));
    assert_eq!(limiter.len(), 0);
    assert!(limiter.allow_n("k", 3));
    for _ in 0..100 {
        assert!(!limiter.allow("k"));
        let peek = limiter.check_n("k", 0).unwrap();
        assert!(!peek.allowed());
        assert_eq!(peek.retry_after_nanos(), SEC);
    }
    clock.advance(nanos(SEC));
    assert!(limiter.allow_n("k", 3));
}

#[test]
fn costs_above_the_limit_are_errors() {
    let (limiter, _clock) = log(Quota::per_second(3));
    assert_eq!(
        limiter.check_n("k", 4),
        Err(InsufficientCapacity {
            requested: 4,
            max: 3
        })
    );
    assert!(limiter.allow_n("k", 3));
}

#[test]
fn the_limit_holds_over_every_span_not_just_aligned_windows() {
    let (limiter, clock) = log(Quota::per_second(3));
    clock.set(nanos(900 * MS));
    assert!(limiter.allow_n("k", 3));
    // A fixed window would reset at 1 s; the log keeps counting until 1.9 s.
    clock.set(nanos(1_899 * MS));
    assert!(!limiter.allow("k"));
    clock.set(nanos(1_900 * MS));
    assert!(limiter.allow_n("k", 3));
}
