//! One thread serving many keyed limiters keeps each one's states apart:
//! each thread remembers where its per-limiter caches live in a small memo
//! shared by all limiters (`src/per_thread.rs`), and a slip there would let
//! one limiter decide on another's states, or on a dropped one's.

use std::time::Duration;

use tollgate::{ManualClock, Quota, RateLimiter, TokenBucket};

/// Miri runs these too, with fewer of everything: still more limiters
/// than the memo has ways.
const SCALE: usize = if cfg!(miri) { 1 } else { 4 };

/// A bucket of one token an hour: a key admits once, then refuses.
fn one_shot() -> TokenBucket<String, ManualClock> {
    TokenBucket::with_clock(
        Quota::new(1, Duration::from_secs(3600)).expect("valid quota"),
        ManualClock::new(),
    )
}

/// More limiters than the memo has ways, used in turns on the same keys:
/// each admits every key once, whatever the others did.
#[test]
fn limiters_taking_turns_on_one_thread_keep_their_own_states() {
    let limiters: Vec<_> = (0..10 * SCALE).map(|_| one_shot()).collect();
    let keys: Vec<String> = (0..5 * SCALE).map(|i| format!("client-{i}")).collect();
    for key in &keys {
        for (i, limiter) in limiters.iter().enumerate() {
            assert!(limiter.allow(key), "limiter {i} refused {key} first");
        }
    }
    for key in &keys {
        for (i, limiter) in limiters.iter().enumerate() {
            assert!(!limiter.allow(key), "limiter {i} admitted {key} twice");
        }
    }
}

/// A limiter made after another was dropped, often at the same address,
/// starts with no states: it admits keys the dropped one had spent.
#[test]
fn a_limiter_made_after_another_is_dropped_starts_fresh() {
    for round in 0..50 * SCALE {
        let spent = Box::new(one_shot());
        assert!(spent.allow("key"), "round {round}: first request");
        assert!(!spent.allow("key"), "round {round}: second request");
        drop(spent);
        let fresh = Box::new(one_shot());
        assert!(fresh.allow("key"), "round {round}: a new limiter refused");
    }
}

/// Threads that come and go, each on the same limiters, each see the
/// limiters' shared states: a token spent on one thread is spent for all.
#[test]
fn threads_share_states_through_their_own_caches() {
    let limiters: Vec<_> = (0..3 * SCALE).map(|_| one_shot()).collect();
    for (i, limiter) in limiters.iter().enumerate() {
        std::thread::scope(|s| {
            s.spawn(|| assert!(limiter.allow("key"), "limiter {i}: first request"));
        });
        std::thread::scope(|s| {
            s.spawn(|| assert!(!limiter.allow("key"), "limiter {i}: second thread"));
        });
        assert!(!limiter.allow("key"), "limiter {i}: the main thread");
    }
}
