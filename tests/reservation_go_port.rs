//! The reservation and cancel scenarios of Go's `x/time/rate` tests, with
//! the same numbers, against this crate's API.
//!
//! Every scenario uses a rate of 10 per second, so one token is `D = 100 ms`
//! and `tN` is `N·D` on a manual clock (which, unlike Go's test clock, never
//! runs backwards: the "jump back" scenarios have no counterpart here).

use std::time::Duration;

use tollgate::wait::{Reservation, Reserve, WaitError};
use tollgate::{
    DirectLimiter, InsufficientCapacity, ManualClock, Quota, RateLimiter, TokenBucket,
    TokenBucketRule,
};

const D: Duration = Duration::from_millis(100);

type Bucket = TokenBucket<String, ManualClock>;

/// A bucket refilling 10 tokens per second and holding `burst`.
fn bucket(burst: u64) -> (Bucket, ManualClock) {
    let clock = ManualClock::new();
    let quota = Quota::per_second(10).with_burst(burst);
    (TokenBucket::with_clock(quota, clock.clone()), clock)
}

fn t(n: u32) -> Duration {
    D * n
}

/// Reserves `n` tokens at `tN` with no limit on the wait and checks the
/// tokens are due at `tM`.
fn reserve<'a>(
    limiter: &'a Bucket,
    clock: &ManualClock,
    at: u32,
    n: u64,
    due: u32,
) -> Reservation<'a, Bucket, str> {
    reserve_max(limiter, clock, at, n, due, Duration::MAX)
}

fn reserve_max<'a>(
    limiter: &'a Bucket,
    clock: &ManualClock,
    at: u32,
    n: u64,
    due: u32,
    max_wait: Duration,
) -> Reservation<'a, Bucket, str> {
    clock.set(t(at));
    let reservation = limiter
        .reserve_within("k", n, max_wait)
        .unwrap_or_else(|e| panic!("reserve {n} at t{at}: {e}"));
    assert_eq!(
        Duration::from_nanos(reservation.ready_at_nanos()),
        t(due),
        "reserve {n} at t{at}"
    );
    assert_eq!(reservation.delay(), t(due) - t(at));
    assert_eq!(reservation.cost(), n);
    reservation
}

fn allow_at(limiter: &Bucket, clock: &ManualClock, at: u32, n: u64) -> bool {
    clock.set(t(at));
    limiter.allow_n("k", n)
}

#[test]
fn simple_reserve() {
    let (limiter, clock) = bucket(2);
    let _ = reserve(&limiter, &clock, 0, 2, 0);
    let _ = reserve(&limiter, &clock, 0, 2, 2);
    let _ = reserve(&limiter, &clock, 3, 2, 4);
}

#[test]
fn mix_of_reservations_and_checks() {
    let (limiter, clock) = bucket(2);
    // More than the burst can never be reserved.
    assert_eq!(
        limiter.reserve("k", 3).unwrap_err(),
        WaitError::Capacity(InsufficientCapacity {
            requested: 3,
            max: 2
        })
    );
    let _ = reserve(&limiter, &clock, 0, 2, 0);
    assert!(!allow_at(&limiter, &clock, 1, 2), "only one token refilled");
    let _ = reserve(&limiter, &clock, 1, 2, 2);
    assert!(!allow_at(&limiter, &clock, 1, 1), "the bucket is in debt");
    assert!(allow_at(&limiter, &clock, 3, 1));
}

#[test]
fn reserve_beyond_burst_is_refused_and_changes_nothing() {
    let (limiter, clock) = bucket(2);
    let _ = reserve(&limiter, &clock, 0, 2, 0);
    assert!(matches!(
        limiter.reserve("k", 3),
        Err(WaitError::Capacity(_))
    ));
    // Did not take tokens, nor give any.
    let _ = reserve(&limiter, &clock, 0, 2, 2);
}

#[test]
fn reserve_within_a_max_wait() {
    let (limiter, clock) = bucket(2);
    let _ = reserve_max(&limiter, &clock, 0, 2, 0, D);
    let _ = reserve_max(&limiter, &clock, 0, 1, 1, D);
    // Due at t2: further than the agreed wait, so refused untouched.
    assert_eq!(
        limiter.reserve_within("k", 1, D).unwrap_err(),
        WaitError::Timeout {
            needed: t(2),
            left: D
        }
    );
    let _ = reserve(&limiter, &clock, 0, 1, 2);
}

#[test]
fn cancel_last() {
    let (limiter, clock) = bucket(2);
    let _ = reserve(&limiter, &clock, 0, 2, 0);
    let r = reserve(&limiter, &clock, 0, 2, 2);
    clock.set(t(1));
    r.cancel(); // both tokens back
    let _ = reserve(&limiter, &clock, 1, 2, 2);
}

#[test]
fn cancel_too_late() {
    let (limiter, clock) = bucket(2);
    let _ = reserve(&limiter, &clock, 0, 2, 0);
    let r = reserve(&limiter, &clock, 0, 2, 2);
    clock.set(t(3));
    r.cancel(); // past due: no effect
    let _ = reserve(&limiter, &clock, 3, 2, 4);
}

#[test]
fn cancel_zero_tokens() {
    let (limiter, clock) = bucket(2);
    let _ = reserve(&limiter, &clock, 0, 2, 0);
    let r = reserve(&limiter, &clock, 0, 1, 1);
    let _ = reserve(&limiter, &clock, 0, 1, 2);
    r.cancel(); // its one token was relied on by the next: nothing back
    let _ = reserve(&limiter, &clock, 0, 1, 3);
}

#[test]
fn cancel_one_token() {
    let (limiter, clock) = bucket(2);
    let _ = reserve(&limiter, &clock, 0, 2, 0);
    let r = reserve(&limiter, &clock, 0, 2, 2);
    let _ = reserve(&limiter, &clock, 0, 1, 3);
    clock.set(t(2));
    r.cancel(); // exactly at its due time: one of two tokens back
    let _ = reserve(&limiter, &clock, 2, 2, 4);
}

#[test]
fn cancel_with_later_reservations() {
    let (limiter, clock) = bucket(4);
    let _ = reserve(&limiter, &clock, 0, 4, 0);
    let a = reserve(&limiter, &clock, 0, 3, 3);
    let _ = reserve(&limiter, &clock, 0, 1, 4);
    let c = reserve(&limiter, &clock, 0, 1, 5);
    clock.set(t(1));
    c.cancel(); // one token back
    a.cancel(); // two back, as if C had never been reserved
    let _ = reserve(&limiter, &clock, 1, 3, 5);
}

#[test]
fn a_failed_reservation_leaves_nothing_to_cancel() {
    // Go's "cancel invalid": the failed reservation is an error value here,
    // so the only check left is that it took nothing.
    let (limiter, clock) = bucket(2);
    let _ = reserve(&limiter, &clock, 0, 2, 0);
    assert!(limiter.reserve("k", 3).is_err());
    let _ = reserve(&limiter, &clock, 0, 2, 2);
}

#[test]
fn cancel_gives_back_no_more_than_full() {
    let (limiter, clock) = bucket(2);
    let r = reserve(&limiter, &clock, 0, 2, 0);
    r.cancel(); // nothing came after it: the bucket is full again
    let d = limiter.check_n("k", 0).unwrap();
    assert_eq!(d.remaining(), 2);
    let _ = reserve(&limiter, &clock, 0, 2, 0);
    let _ = reserve(&limiter, &clock, 0, 2, 2);
}

#[test]
fn a_zero_cost_reservation_takes_nothing() {
    let (limiter, clock) = bucket(2);
    let _ = reserve(&limiter, &clock, 0, 2, 0);
    // Like a peek: due when one token would pass, and nothing taken.
    let peek = reserve(&limiter, &clock, 0, 0, 1);
    peek.cancel();
    let _ = reserve(&limiter, &clock, 0, 1, 1);
    // An untracked key is a full bucket and is not tracked by a peek.
    assert_eq!(limiter.reserve("fresh", 0).unwrap().delay(), Duration::ZERO);
    assert_eq!(limiter.len(), 1);
}

#[test]
fn the_direct_bucket_reserves_the_same_way() {
    let clock = ManualClock::new();
    let limiter = DirectLimiter::<TokenBucketRule, _>::with_clock(
        Quota::per_second(10).with_burst(4),
        clock.clone(),
    );
    let due = |r: &Reservation<'_, _, ()>| Duration::from_nanos(r.ready_at_nanos());
    assert_eq!(due(&limiter.reserve(&(), 4).unwrap()), t(0));
    let a = limiter.reserve(&(), 3).unwrap();
    assert_eq!(due(&a), t(3));
    assert_eq!(due(&limiter.reserve(&(), 1).unwrap()), t(4));
    let c = limiter.reserve(&(), 1).unwrap();
    assert_eq!(due(&c), t(5));
    clock.set(t(1));
    c.cancel();
    a.cancel();
    assert_eq!(due(&limiter.reserve(&(), 3).unwrap()), t(5));
}
