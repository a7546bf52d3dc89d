//! Extreme inputs to waits and reservations: errors, never panics or
//! overflows.

use std::time::Duration;

use tollgate::wait::{Acquire, ManualSleeper, Reserve, WaitError, Waiter};
use tollgate::{Clock, FixedWindow, ManualClock, Quota, TokenBucket};

#[test]
fn the_largest_cost_is_a_capacity_error() {
    let limiter: TokenBucket = TokenBucket::new(Quota::per_second(5));
    assert!(matches!(
        limiter.acquire("k", u64::MAX, Duration::MAX),
        Err(WaitError::Capacity(_))
    ));
    assert!(matches!(
        limiter.reserve("k", u64::MAX),
        Err(WaitError::Capacity(_))
    ));
    let window: FixedWindow = FixedWindow::new(Quota::per_second(5));
    assert!(matches!(
        window.acquire("k", u64::MAX, Duration::ZERO),
        Err(WaitError::Capacity(_))
    ));
}

#[test]
fn a_debt_past_the_end_of_time_is_a_timeout() {
    // One token per ~584 years: the bucket's time saturates at once.
    let clock = ManualClock::new();
    let quota = Quota::new(1, Duration::from_nanos(u64::MAX)).unwrap();
    let limiter: TokenBucket<String, _> = TokenBucket::with_clock(quota, clock.clone());
    assert_eq!(limiter.reserve("k", 1).unwrap().delay(), Duration::ZERO);
    let error = limiter.reserve("k", 1).unwrap_err();
    assert!(matches!(error, WaitError::Timeout { .. }), "{error:?}");
    let waiter = Waiter::with_sleeper(ManualSleeper::new(clock.clone()));
    let error = limiter
        .acquire_with(&waiter, "k", 1, Duration::MAX)
        .unwrap_err();
    assert!(matches!(error, WaitError::Timeout { .. }), "{error:?}");
    assert_eq!(clock.elapsed(), Duration::ZERO);
}

#[test]
fn a_clock_near_its_end_does_not_overflow() {
    let clock = ManualClock::new();
    clock.set(Duration::from_nanos(u64::MAX - 10));
    let limiter: TokenBucket<String, _> =
        TokenBucket::with_clock(Quota::per_second(1).with_burst(2), clock.clone());
    // The state after the reservation would lie past the clock's end: it
    // cannot be recorded, so the reservation is refused, untouched.
    let refused = limiter.reserve("k", 2);
    assert!(
        matches!(refused, Err(WaitError::Timeout { .. })),
        "{refused:?}"
    );
    let waiter = Waiter::with_sleeper(ManualSleeper::new(clock.clone()));
    let refused = limiter.acquire_with(&waiter, "k", 1, Duration::MAX);
    assert!(
        matches!(refused, Err(WaitError::Timeout { .. })),
        "{refused:?}"
    );
    assert_eq!(clock.now_nanos(), u64::MAX - 10);
}

#[test]
fn zero_and_maximal_timeouts() {
    let clock = ManualClock::new();
    let limiter: TokenBucket<String, _> =
        TokenBucket::with_clock(Quota::per_second(1), clock.clone());
    let waiter = Waiter::with_sleeper(ManualSleeper::new(clock.clone()));
    assert_eq!(
        limiter.acquire_with(&waiter, "k", 1, Duration::ZERO),
        Ok(Duration::ZERO)
    );
    assert_eq!(
        limiter.acquire_with(&waiter, "k", 1, Duration::ZERO),
        Err(WaitError::Timeout {
            needed: Duration::from_secs(1),
            left: Duration::ZERO
        })
    );
    assert_eq!(
        limiter.acquire_with(&waiter, "k", 1, Duration::MAX),
        Ok(Duration::from_secs(1))
    );
}
