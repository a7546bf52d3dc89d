//! The models can fail: the token bucket rule applied with a load and a
//! plain store instead of a CAS is caught by the same scenarios that pass
//! for the real cell.
#![cfg(tollgate_loom)]

use std::time::Duration;

use loom::sync::atomic::{AtomicU64, Ordering};
use tollgate::{
    Algorithm, Clock, Decision, InsufficientCapacity, PackedWord, Quota, RateLimiter,
    TokenBucketRule,
};
use tollgate_loom_tests::reference::Windows;
use tollgate_loom_tests::scenarios::{Crossing, crossing_spend, frozen_spend};
use tollgate_loom_tests::{Bound, RecordingClock};

/// A single-key limiter that runs a rule's real decision on a private copy
/// of the shared word, then writes the result back with a plain store: a
/// lost update whenever two calls overlap.
struct LoadThenStore<A> {
    rule: A,
    word: AtomicU64,
    clock: RecordingClock,
}

impl<A: Algorithm<State = PackedWord>> LoadThenStore<A> {
    fn new(quota: Quota, clock: RecordingClock) -> Self {
        let rule = A::from_quota(&quota);
        let word = AtomicU64::new(rule.fresh().load());
        LoadThenStore { rule, word, clock }
    }
}

impl<A: Algorithm<State = PackedWord>> RateLimiter<()> for LoadThenStore<A> {
    fn check_n(&self, _key: &(), cost: u64) -> Result<Decision, InsufficientCapacity> {
        let max = self.rule.max_cost();
        if cost > max {
            return Err(InsufficientCapacity {
                requested: cost,
                max,
            });
        }
        let now = self.clock.now_nanos();
        // Relaxed: ordering is not the bug being modelled; the gap between
        // this load and the store below is.
        let scratch = PackedWord::new(self.word.load(Ordering::Relaxed));
        let decision = self
            .rule
            .check(&scratch, now, cost)
            .expect("a scratch word is never retired");
        // Relaxed: as above. The store overwrites whatever another thread
        // stored since the load.
        self.word.store(scratch.load(), Ordering::Relaxed);
        Ok(decision)
    }
}

#[test]
#[should_panic(expected = "model violation")]
fn load_then_store_token_bucket_overspends() {
    frozen_spend(Bound::Exhaustive, 2, &[&[1, 1], &[1, 1]], |clock| {
        LoadThenStore::<TokenBucketRule>::new(Quota::per_second(2), clock)
    });
}

#[test]
#[should_panic(expected = "model violation")]
fn load_then_store_fixed_window_is_caught_across_a_boundary() {
    let crossing = Crossing {
        start: Duration::from_millis(250),
        later: Duration::from_millis(1750),
    };
    let reference = Windows {
        limit: 2,
        window: 1_000_000_000,
    };
    crossing_spend(Bound::Exhaustive, 2, crossing, reference, |clock| {
        LoadThenStore::<tollgate::FixedWindowRule>::new(Quota::per_second(2), clock)
    });
}
