//! The reservation and cancel scenarios of Go's `x/time/rate` tests, with
//! the same numbers, against this crate's API. Where an older reservation is
//! cancelled while a newer one still stands, Go gives back the part no later
//! reservation relied on and this crate gives back nothing (see the `wait`
//! module docs: Go's count needs a second word, and counted from `TAT` it
//! over-admitted); those scenarios say what Go expects beside what this
//! crate does.
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
    // Exactly at its due time, a newer reservation behind it: Go gives one
    // of the two tokens back (the next 2 due at t4); nothing goes back here.
    r.cancel();
    let _ = reserve(&limiter, &clock, 2, 2, 5);
}

#[test]
fn cancel_with_later_reservations() {
    let (limiter, clock) = bucket(4);
    let _ = reserve(&limiter, &clock, 0, 4, 0);
    let a = reserve(&limiter, &clock, 0, 3, 3);
    let _ = reserve(&limiter, &clock, 0, 1, 4);
    let c = reserve(&limiter, &clock, 0, 1, 5);
    clock.set(t(1));
    c.cancel(); // the newest: its one token back
    // B still stands behind A: Go gives two of A's three back (the next 3
    // due at t5); nothing goes back here.
    a.cancel();
    let _ = reserve(&limiter, &clock, 1, 3, 7);
}

/// Cancels out of order never let the bucket admit more than its quota: at
/// 10 per second with a burst of 5, at most 10 units pass in any 500 ms.
/// (Counting what an older reservation gives back from `TAT` once admitted
/// 11 here: 5 at t9, the 1 reserved for t11, 5 at t14.)
#[test]
fn cancels_out_of_order_never_over_admit() {
    let (limiter, clock) = bucket(5);
    assert!(allow_at(&limiter, &clock, 0, 5));
    let older = reserve(&limiter, &clock, 0, 5, 5);
    let newer = reserve(&limiter, &clock, 0, 5, 10);
    let _last = reserve(&limiter, &clock, 0, 1, 11);
    newer.cancel();
    older.cancel();
    // `_last` is still due at t11: every admission in [t9, t14] counts.
    let mut admitted = 1;
    for at in 9..=14 {
        clock.set(t(at));
        if limiter.allow_n("k", 5) {
            admitted += 5;
        }
    }
    assert!(admitted <= 10, "{admitted} units in 500 ms");
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
    // As with the keyed bucket: t5 in Go, t7 here.
    assert_eq!(due(&limiter.reserve(&(), 3).unwrap()), t(7));
}
