//! Fixed window boundaries on a manual clock: windows are `[kW, (k+1)W)` on
//! the clock's timeline and each admits at most `limit` units.

use std::time::Duration;

use tollgate::{FixedWindow, InsufficientCapacity, ManualClock, Quota, RateLimiter};

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000 * MS;

fn window(quota: Quota) -> (FixedWindow<String, ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    (FixedWindow::with_clock(quota, clock.clone()), clock)
}

fn nanos(n: u64) -> Duration {
    Duration::from_nanos(n)
}

#[test]
fn a_window_admits_exactly_its_limit() {
    let (limiter, _clock) = window(Quota::per_second(5));
    for spent in 1..=5 {
        let d = limiter.check("k");
        assert!(d.allowed());
        assert_eq!((d.limit(), d.remaining()), (5, 5 - spent));
        // The window [0, 1 s) ends in 1 s.
        assert_eq!(d.reset_after_nanos(), SEC);
    }
    let d = limiter.check("k");
    assert!(!d.allowed());
    assert_eq!(d.remaining(), 0);
    assert_eq!((d.retry_after_nanos(), d.reset_after_nanos()), (SEC, SEC));
}

#[test]
fn the_next_window_starts_exactly_at_the_edge() {
    let (limiter, clock) = window(Quota::per_second(5));
    assert!(limiter.allow_n("k", 5));
    clock.advance(nanos(SEC - 1));
    let d = limiter.check("k");
    assert!(!d.allowed());
    assert_eq!((d.retry_after_nanos(), d.reset_after_nanos()), (1, 1));
    clock.advance(nanos(1));
    let d = limiter.check("k");
    assert!(d.allowed());
    assert_eq!((d.remaining(), d.reset_after_nanos()), (4, SEC));
}

#[test]
fn windows_are_aligned_to_the_clock_not_to_the_first_request() {
    let (limiter, clock) = window(Quota::per_second(5));
    clock.advance(nanos(1_500 * MS));
    // First request at 1.5 s falls in [1 s, 2 s): 500 ms left.
    let d = limiter.check_n("k", 5).unwrap();
    assert!(d.allowed());
    assert_eq!(d.reset_after_nanos(), 500 * MS);
    clock.advance(nanos(500 * MS - 1));
    assert!(!limiter.allow("k"));
    // At 2 s a whole new limit is available: the known fixed-window burst of
    // up to 2·limit around an edge.
    clock.advance(nanos(1));
    assert!(limiter.allow_n("k", 5));
}

#[test]
fn weighted_costs_and_denials() {
    let (limiter, clock) = window(Quota::per_second(5));
    clock.advance(nanos(200 * MS));
    assert_eq!(limiter.check_n("k", 3).unwrap().remaining(), 2);
    let d = limiter.check_n("k", 3).unwrap();
    assert!(!d.allowed());
    // Denied: 2 still left, the window ends at 1 s, 800 ms away.
    assert_eq!(d.remaining(), 2);
    assert_eq!(
        (d.retry_after_nanos(), d.reset_after_nanos()),
        (800 * MS, 800 * MS)
    );
    for _ in 0..100 {
        assert!(!limiter.allow_n("k", 3));
    }
    assert!(limiter.allow_n("k", 2));
    assert!(!limiter.allow("k"));
}

#[test]
fn cost_zero_peeks() {
    let (limiter, clock) = window(Quota::per_second(5));
    let d = limiter.check_n("k", 0).unwrap();
    assert!(d.allowed());
    // Nothing used: already fresh, nothing to reset.
    assert_eq!((d.remaining(), d.reset_after_nanos()), (5, 0));
    assert_eq!(limiter.len(), 0);
    assert!(limiter.allow_n("k", 5));
    clock.advance(nanos(250 * MS));
    let d = limiter.check_n("k", 0).unwrap();
    assert!(!d.allowed());
    assert_eq!(d.remaining(), 0);
    assert_eq!(
        (d.retry_after_nanos(), d.reset_after_nanos()),
        (750 * MS, 750 * MS)
    );
}

#[test]
fn costs_above_the_limit_are_errors() {
    let (limiter, _clock) = window(Quota::per_second(5));
    assert_eq!(
        limiter.check_n("k", 6),
        Err(InsufficientCapacity {
            requested: 6,
            max: 5
        })
    );
    assert!(limiter.allow_n("k", 5));
}

#[test]
fn a_skipped_window_leaves_nothing_behind() {
    let (limiter, clock) = window(Quota::per_second(5));
    assert!(limiter.allow_n("k", 5));
    clock.advance(nanos(2 * SEC + 10));
    let d = limiter.check_n("k", 0).unwrap();
    assert_eq!((d.remaining(), d.reset_after_nanos()), (5, 0));
    assert!(limiter.allow_n("k", 5));
}

#[test]
fn tiny_windows_of_one_nanosecond() {
    let (limiter, clock) = window(Quota::new(2, nanos(1)).unwrap());
    assert!(limiter.allow_n("k", 2));
    let d = limiter.check("k");
    assert!(!d.allowed());
    assert_eq!(d.retry_after_nanos(), 1);
    clock.advance(nanos(1));
    assert!(limiter.allow_n("k", 2));
}
