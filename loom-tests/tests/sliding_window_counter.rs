//! Sliding window counter cell (`DirectLimiter<SlidingWindowCounterRule>`):
//! the two-count word, including the weighted previous window after a
//! boundary.
#![cfg(tollgate_loom)]

use std::time::Duration;

use tollgate::{DirectLimiter, Quota, SlidingWindowCounterRule};
use tollgate_loom_tests::reference::SlidingCounts;
use tollgate_loom_tests::scenarios::{Crossing, crossing_spend, frozen_spend};
use tollgate_loom_tests::{Bound, RecordingClock};

type Cell = DirectLimiter<SlidingWindowCounterRule, RecordingClock>;

/// From 250 ms in window 0 to 750 ms into window 1, where the previous
/// window still weighs a quarter.
const CROSSING: Crossing = Crossing {
    start: Duration::from_millis(250),
    later: Duration::from_millis(1750),
};

#[test]
fn two_threads_spend_within_one_window() {
    frozen_spend(Bound::Exhaustive, 2, &[&[1, 1], &[1, 1]], |clock| {
        Cell::with_clock(Quota::per_second(2), clock)
    });
}

#[test]
fn three_threads_race_for_three() {
    frozen_spend(Bound::Preemptions(4), 3, &[&[1], &[2], &[0, 2]], |clock| {
        Cell::with_clock(Quota::per_second(3), clock)
    });
}

#[test]
fn spending_across_a_window_boundary() {
    let reference = SlidingCounts {
        limit: 2,
        window: 1_000_000_000,
    };
    crossing_spend(Bound::Exhaustive, 2, CROSSING, reference, |clock| {
        Cell::with_clock(Quota::per_second(2), clock)
    });
}
