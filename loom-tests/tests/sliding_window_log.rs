//! Sliding window log cell (`DirectLimiter<SlidingWindowLogRule>`): the
//! per-key lock and its log, including units expiring while others spend.
#![cfg(tollgate_loom)]

use std::time::Duration;

use tollgate::{DirectLimiter, Quota, SlidingWindowLogRule};
use tollgate_loom_tests::reference::Log;
use tollgate_loom_tests::scenarios::{Crossing, crossing_spend, frozen_spend};
use tollgate_loom_tests::{Bound, RecordingClock};

type Cell = DirectLimiter<SlidingWindowLogRule, RecordingClock>;

/// Units admitted at 250 ms stop counting at 1250 ms, before 1750 ms.
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
    frozen_spend(Bound::Exhaustive, 3, &[&[1], &[2], &[0, 2]], |clock| {
        Cell::with_clock(Quota::per_second(3), clock)
    });
}

#[test]
fn spending_while_units_expire() {
    let reference = Log {
        limit: 2,
        window: 1_000_000_000,
    };
    crossing_spend(Bound::Exhaustive, 2, CROSSING, reference, |clock| {
        Cell::with_clock(Quota::per_second(2), clock)
    });
}
