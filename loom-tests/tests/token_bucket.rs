//! Token bucket cell (`DirectLimiter<TokenBucketRule>`): the GCRA word and
//! its CAS loop under every interleaving the bound allows.
#![cfg(tollgate_loom)]

use std::time::Duration;

use loom::sync::Arc;
use loom::thread;
use tollgate::{DirectLimiter, Quota, TokenBucketRule};
use tollgate_loom_tests::reference::Bucket;
use tollgate_loom_tests::scenarios::{assert_well_formed, frozen_spend};
use tollgate_loom_tests::serial::{Event, Timing, admitted_units, assert_explained, observe};
use tollgate_loom_tests::{Bound, RecordingClock, explore};

type Cell = DirectLimiter<TokenBucketRule, RecordingClock>;

fn bucket(capacity: u64, clock: RecordingClock) -> Cell {
    Cell::with_clock(Quota::per_second(capacity), clock)
}

#[test]
fn two_threads_spend_one_at_a_time_from_two() {
    frozen_spend(Bound::Exhaustive, 2, &[&[1, 1], &[1, 1]], |clock| {
        bucket(2, clock)
    });
}

#[test]
fn two_threads_mix_costs_and_a_peek() {
    frozen_spend(Bound::Exhaustive, 3, &[&[2, 1], &[0, 2]], |clock| {
        bucket(3, clock)
    });
}

#[test]
fn three_threads_race_for_three() {
    frozen_spend(Bound::Preemptions(4), 3, &[&[1], &[2], &[2]], |clock| {
        bucket(3, clock)
    });
}

#[test]
fn three_threads_race_for_two() {
    frozen_spend(Bound::Preemptions(4), 2, &[&[1, 1], &[2], &[1]], |clock| {
        bucket(2, clock)
    });
}

/// Two threads spend a unit twice from a bucket of 2 refilling one every
/// 500 ms, while a third moves the clock by one refill interval.
#[test]
fn refill_while_two_spend() {
    const CAPACITY: u64 = 2;
    const INTERVAL: Duration = Duration::from_millis(500);
    explore(Bound::Preemptions(4), || {
        let clock = RecordingClock::default();
        let limiter = Arc::new(bucket(CAPACITY, clock.clone()));
        let ticker = thread::spawn(move || clock.advance(INTERVAL));
        let spenders: Vec<_> = (0..2)
            .map(|_| {
                let limiter = Arc::clone(&limiter);
                thread::spawn(move || vec![observe(&*limiter, &(), 1), observe(&*limiter, &(), 1)])
            })
            .collect();
        ticker.join().expect("clock thread panicked");
        let threads: Vec<Vec<Event>> = spenders
            .into_iter()
            .map(|handle| handle.join().expect("spending thread panicked"))
            .collect();
        let last = observe(&*limiter, &(), 0);

        let events: Vec<Event> = threads.iter().flatten().copied().collect();
        assert_well_formed(CAPACITY, &events);
        let refilled = 1;
        let admitted = admitted_units(&events);
        assert!(
            (CAPACITY..=CAPACITY + refilled).contains(&admitted),
            "model violation: {admitted} units admitted, expected between the burst \
             {CAPACITY} and burst + refilled {}: {threads:?}",
            CAPACITY + refilled
        );
        let interval = u64::try_from(INTERVAL.as_nanos()).expect("short interval");
        let reference = Bucket {
            capacity: CAPACITY,
            interval,
        };
        assert_explained(&reference, &[], &threads, &[last], Timing::AsRead);
    });
}
