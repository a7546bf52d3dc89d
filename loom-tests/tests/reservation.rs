//! Reservations and cancels on the token bucket word under every
//! interleaving: each outcome must be one that some serial order of the
//! same operations produces.
//!
//! The clock stands still at 0. The bucket holds 2 and refills 10 per second,
//! so a token is `T = 100 ms` and the tolerance is 200 ms; a peek reports the
//! bucket's debt (`TAT - now`) as its reset time.
#![cfg(tollgate_loom)]

use std::time::Duration;

use loom::sync::Arc;
use loom::thread;
use tollgate::wait::Reserve;
use tollgate::{DirectLimiter, ManualClock, Quota, TokenBucketRule};
use tollgate_loom_tests::{Bound, explore};

type Cell = DirectLimiter<TokenBucketRule, ManualClock>;

const T: Duration = Duration::from_millis(100);

fn bucket() -> Arc<Cell> {
    Arc::new(Cell::with_clock(
        Quota::per_second(10).with_burst(2),
        ManualClock::new(),
    ))
}

/// How far the bucket is in debt (its `TAT`, with the clock at 0).
fn debt(limiter: &Cell) -> Duration {
    limiter.check_n(0).unwrap().reset_after()
}

fn due(nanos: u64) -> Duration {
    Duration::from_nanos(nanos)
}

#[test]
fn two_reservations_queue_one_behind_the_other() {
    explore(Bound::Exhaustive, || {
        let limiter = bucket();
        let other = Arc::clone(&limiter);
        let one = thread::spawn(move || other.reserve(&(), 1).unwrap().ready_at_nanos());
        let two = limiter.reserve(&(), 2).unwrap().ready_at_nanos();
        let one = one.join().unwrap();
        // Serially: whichever lands second waits for the one token missing.
        let outcome = (due(two), due(one));
        assert!(
            outcome == (Duration::ZERO, T) || outcome == (T, Duration::ZERO),
            "due times {outcome:?}"
        );
        assert_eq!(debt(&limiter), 3 * T);
    });
}

#[test]
fn a_cancel_racing_a_reservation() {
    explore(Bound::Exhaustive, || {
        let limiter = bucket();
        let _first = limiter.reserve(&(), 2).unwrap(); // due now, debt 200 ms
        let second = limiter.reserve(&(), 2).unwrap(); // due at 200 ms, debt 400 ms
        let other = Arc::clone(&limiter);
        let newcomer = thread::spawn(move || other.reserve(&(), 1).unwrap().ready_at_nanos());
        second.cancel();
        let newcomer = due(newcomer.join().unwrap());
        let outcome = (newcomer, debt(&limiter));
        // Cancel first: both tokens back (debt 200), the newcomer due at 100.
        // Newcomer first: due at 300 and standing behind the cancelled one,
        // so nothing goes back (debt 500).
        assert!(
            outcome == (T, 3 * T) || outcome == (3 * T, 5 * T),
            "newcomer due {:?}, debt {:?}",
            outcome.0,
            outcome.1
        );
    });
}

#[test]
fn two_cancels_racing() {
    explore(Bound::Exhaustive, || {
        let limiter = bucket();
        let _first = limiter.reserve(&(), 2).unwrap();
        let second = limiter.reserve(&(), 2).unwrap();
        let other = Arc::clone(&limiter);
        let third = thread::spawn(move || {
            let third = other.reserve(&(), 1).unwrap();
            third.cancel();
        });
        second.cancel();
        third.join().unwrap();
        // Serial orders (the third's reserve always before its cancel):
        // cancel 2nd, reserve 3rd, cancel 3rd -> 200 ms;
        // reserve 3rd, cancel 2nd (the 3rd stands behind it: nothing back),
        // cancel 3rd -> 400 ms;
        // reserve 3rd, cancel 3rd, cancel 2nd -> 200 ms.
        let left = debt(&limiter);
        assert!(left == 2 * T || left == 4 * T, "debt {left:?}");
    });
}

#[test]
fn a_cancel_racing_a_plain_check() {
    explore(Bound::Exhaustive, || {
        let limiter = bucket();
        let _first = limiter.reserve(&(), 1).unwrap(); // debt 100 ms
        let second = limiter.reserve(&(), 2).unwrap(); // due at 100 ms, debt 300 ms
        let other = Arc::clone(&limiter);
        let check = thread::spawn(move || other.check_n(1).unwrap().allowed());
        second.cancel();
        let allowed = check.join().unwrap();
        // Check first: denied (in debt), then both tokens back: debt 100.
        // Cancel first: debt 100, the check passes: debt 200.
        let outcome = (allowed, debt(&limiter));
        assert!(
            outcome == (false, T) || outcome == (true, 2 * T),
            "check allowed {}, debt {:?}",
            outcome.0,
            outcome.1
        );
    });
}
