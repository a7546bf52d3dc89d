//! Sliding window counter boundaries on a manual clock. At offset `e` into a
//! window of length `W`, `n` units pass when
//! `prev·(W - e) + (cur + n)·W ≤ limit·W`.

use std::time::Duration;

use tollgate::{InsufficientCapacity, ManualClock, Quota, RateLimiter, SlidingWindowCounter};

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000 * MS;

fn counter(quota: Quota) -> (SlidingWindowCounter<String, ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    (
        SlidingWindowCounter::with_clock(quota, clock.clone()),
        clock,
    )
}

fn nanos(n: u64) -> Duration {
    Duration::from_nanos(n)
}

#[test]
fn the_first_window_admits_exactly_the_limit() {
    let (limiter, _clock) = counter(Quota::per_second(10));
    for spent in 1..=10 {
        let d = limiter.check("k");
        assert!(d.allowed());
        assert_eq!((d.limit(), d.remaining()), (10, 10 - spent));
        // `cur` weighs until the end of the next window: 1 s + 1 s.
        assert_eq!(d.reset_after_nanos(), 2 * SEC);
    }
    let d = limiter.check("k");
    assert!(!d.allowed());
    // Next window: prev = 10 must weigh at most 9·W, so 10·(W - e) ≤ 9·W,
    // e ≥ 100 ms: retry after 1 s + 100 ms.
    assert_eq!(d.retry_after_nanos(), 1_100 * MS);
    assert_eq!(d.reset_after_nanos(), 2 * SEC);
}

#[test]
fn the_previous_window_decays_linearly() {
    let (limiter, clock) = counter(Quota::per_second(10));
    assert!(limiter.allow_n("k", 10));
    clock.advance(nanos(1_100 * MS - 1));
    let d = limiter.check("k");
    assert!(!d.allowed());
    assert_eq!(d.retry_after_nanos(), 1);
    clock.advance(nanos(1));
    // At e = 100 ms: 10·900 ms = 9·W, so one unit fits and then none.
    let d = limiter.check("k");
    assert!(d.allowed());
    assert_eq!(d.remaining(), 0);
    clock.advance(nanos(400 * MS));
    // At e = 500 ms: room ⌊(10·W - 10·W/2) / W⌋ = 5, minus cur 1.
    let d = limiter.check_n("k", 0).unwrap();
    assert!(d.allowed());
    assert_eq!(d.remaining(), 4);
    // cur > 0: 500 ms to the window end plus one more window.
    assert_eq!(d.reset_after_nanos(), 1_500 * MS);
    clock.advance(nanos(500 * MS));
    // At 2 s: prev = 1 (the last window's count) weighs 1·W: 9 fit.
    let d = limiter.check_n("k", 0).unwrap();
    assert_eq!((d.remaining(), d.reset_after_nanos()), (9, SEC));
    clock.advance(nanos(SEC));
    // At 3 s both counts have decayed: fresh.
    let d = limiter.check_n("k", 0).unwrap();
    assert_eq!((d.remaining(), d.reset_after_nanos()), (10, 0));
}

#[test]
fn weighted_cost_retry_accounts_for_the_whole_cost() {
    let (limiter, clock) = counter(Quota::per_second(10));
    assert!(limiter.allow_n("k", 8));
    clock.advance(nanos(SEC));
    // At 1 s: prev = 8 weighs 8·W, so 2 fit now.
    assert_eq!(limiter.check_n("k", 0).unwrap().remaining(), 2);
    let d = limiter.check_n("k", 6).unwrap();
    assert!(!d.allowed());
    // 6 fit when 8·(W - e) ≤ 4·W: e ≥ 500 ms.
    assert_eq!(d.retry_after_nanos(), 500 * MS);
    assert_eq!(d.remaining(), 2);
    clock.advance(nanos(500 * MS));
    assert!(limiter.allow_n("k", 6));
}

#[test]
fn denied_calls_and_peeks_do_not_consume() {
    let (limiter, clock) = counter(Quota::per_second(4));
    let d = limiter.check_n("k", 0).unwrap();
    assert!(d.allowed());
    assert_eq!((d.remaining(), d.reset_after_nanos()), (4, 0));
    assert_eq!(limiter.len(), 0);
    assert!(limiter.allow_n("k", 4));
    for _ in 0..100 {
        assert!(!limiter.allow("k"));
        assert!(!limiter.check_n("k", 0).unwrap().allowed());
    }
    // At 1 s + 250 ms: 4·750 ms = 3·W, so exactly one unit fits.
    clock.advance(nanos(1_250 * MS));
    assert!(limiter.allow("k"));
    assert!(!limiter.allow("k"));
}

#[test]
fn costs_above_the_limit_are_errors() {
    let (limiter, _clock) = counter(Quota::per_second(10));
    assert_eq!(
        limiter.check_n("k", 11),
        Err(InsufficientCapacity {
            requested: 11,
            max: 10
        })
    );
    assert!(limiter.allow_n("k", 10));
}

#[test]
fn windows_are_aligned_to_the_clock() {
    let (limiter, clock) = counter(Quota::per_second(10));
    clock.advance(nanos(1_750 * MS));
    assert!(limiter.allow_n("k", 10));
    // 250 ms later a new window starts with prev = 10 at full weight.
    clock.advance(nanos(250 * MS));
    let d = limiter.check_n("k", 0).unwrap();
    assert!(!d.allowed());
    assert_eq!(d.remaining(), 0);
    assert_eq!(d.retry_after_nanos(), 100 * MS);
}
