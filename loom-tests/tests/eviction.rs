//! Eviction racing a request on one key, through the real `KeyedLimiter`
//! and its store.
//!
//! The key is spent before the threads start. One thread moves the clock to
//! the instant the key's state becomes fresh and evicts idle keys; another
//! spends on the key twice. Whether the eviction lands before, between or
//! after the spends, no extra unit may pass and none may be lost.
#![cfg(tollgate_loom)]

use std::time::Duration;

use loom::sync::Arc;
use loom::thread;
use tollgate::{
    Algorithm, FixedWindowRule, KeyedLimiter, KeyedOptions, Quota, RateLimiter,
    SlidingWindowLogRule, TokenBucketRule,
};
use tollgate_loom_tests::reference::{Bucket, Log, Windows};
use tollgate_loom_tests::scenarios::assert_well_formed;
use tollgate_loom_tests::serial::{
    Event, Reference, Timing, admitted_units, assert_explained, observe,
};
use tollgate_loom_tests::{Bound, RecordingClock, explore};

const KEY: &str = "client";
const SECOND: u64 = 1_000_000_000;

/// When the key is first spent and when its state is fresh again.
#[derive(Clone, Copy)]
struct Times {
    spent: Duration,
    fresh: Duration,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).expect("short model times")
}

/// The scenario for a rule allowing one unit per second, whose state spent
/// at `times.spent` is fresh again at `times.fresh`; `reference` models it.
fn evict_while_spending<A, R>(times: Times, reference: R)
where
    A: Algorithm,
    R: Reference + Send + Sync + 'static,
{
    explore(Bound::Exhaustive, move || {
        let clock = RecordingClock::at(times.spent);
        let options = KeyedOptions::new().auto_sweep(false);
        let limiter = Arc::new(KeyedLimiter::<A, String, _>::with_options(
            Quota::per_second(1),
            clock.clone(),
            options,
        ));
        let before = observe(&*limiter, KEY, 1);

        let evictor = {
            let limiter = Arc::clone(&limiter);
            thread::spawn(move || {
                clock.set(times.fresh);
                limiter.evict_idle()
            })
        };
        let spender = {
            let limiter = Arc::clone(&limiter);
            thread::spawn(move || vec![observe(&*limiter, KEY, 1), observe(&*limiter, KEY, 1)])
        };
        let evicted = evictor.join().expect("evicting thread panicked");
        let threads = vec![spender.join().expect("spending thread panicked")];
        let last = observe(&*limiter, KEY, 0);

        assert!(
            evicted <= 1 && limiter.len() <= 1,
            "model violation: one key, {evicted} evicted"
        );
        let events: Vec<Event> = threads.iter().flatten().copied().collect();
        assert_well_formed(1, &events);
        let admitted = admitted_units(std::iter::once(&before).chain(&events));
        // One unit per second: the burst plus the one refilled by `fresh`.
        assert!(
            admitted <= 2,
            "model violation: {admitted} units admitted where 2 are allowed: {threads:?}"
        );
        let candidates = [nanos(times.spent), nanos(times.fresh)];
        assert_explained(
            &reference,
            &[before],
            &threads,
            &[last],
            Timing::NoEarlierThan(&candidates),
        );
    });
}

#[test]
fn token_bucket_eviction_races_spending() {
    let times = Times {
        spent: Duration::ZERO,
        fresh: Duration::from_secs(1),
    };
    let reference = Bucket {
        capacity: 1,
        interval: SECOND,
    };
    evict_while_spending::<TokenBucketRule, _>(times, reference);
}

#[test]
fn fixed_window_eviction_races_spending() {
    let times = Times {
        spent: Duration::from_millis(250),
        fresh: Duration::from_millis(1250),
    };
    let reference = Windows {
        limit: 1,
        window: SECOND,
    };
    evict_while_spending::<FixedWindowRule, _>(times, reference);
}

#[test]
fn sliding_log_eviction_races_spending() {
    let times = Times {
        spent: Duration::from_millis(250),
        fresh: Duration::from_millis(1250),
    };
    let reference = Log {
        limit: 1,
        window: SECOND,
    };
    evict_while_spending::<SlidingWindowLogRule, _>(times, reference);
}

/// Eviction with time frozen must never remove a spent key.
#[test]
fn eviction_keeps_a_spent_key() {
    explore(Bound::Exhaustive, || {
        let clock = RecordingClock::default();
        let limiter = Arc::new(KeyedLimiter::<TokenBucketRule, String, _>::with_clock(
            Quota::per_second(2),
            clock,
        ));
        let evictor = {
            let limiter = Arc::clone(&limiter);
            thread::spawn(move || limiter.evict_idle())
        };
        let spent = limiter.allow(KEY);
        evictor.join().expect("evicting thread panicked");
        assert!(spent, "model violation: a fresh key refused its first unit");
        assert_eq!(limiter.len(), 1, "model violation: a spent key was evicted");
        assert!(
            limiter.allow(KEY),
            "model violation: the second unit was lost"
        );
        assert!(
            !limiter.allow(KEY),
            "model violation: a third unit was invented"
        );
    });
}
