//! Who gets capacity, in what order; jitter; and the key cap, on a manual
//! clock.

use std::sync::Mutex;
use std::time::Duration;

use tollgate::wait::{Acquire, Jitter, ManualSleeper, Reserve, Sleeper, WaitError, Waiter};
use tollgate::{
    Clock, FixedWindow, KeyedOptions, ManualClock, Quota, RateLimiter, Registry, TokenBucket,
};

const MS: Duration = Duration::from_millis(1);

#[test]
fn bucket_waiters_are_served_in_arrival_order() {
    let clock = ManualClock::new();
    let limiter: TokenBucket<String, _> =
        TokenBucket::with_clock(Quota::per_second(10).with_burst(1), clock.clone());
    assert!(limiter.allow("k"));
    // Five waiters of different costs queue up at t = 0.
    let costs = [1, 1, 1, 1, 1];
    let due: Vec<u64> = costs
        .iter()
        .map(|&cost| limiter.reserve("k", cost).unwrap().ready_at_nanos())
        .collect();
    // One token per 100 ms, strictly in the order they came.
    let expected: Vec<u64> = (1..=5).map(|n| n * 100_000_000).collect();
    assert_eq!(due, expected);
}

#[test]
fn no_bucket_waiter_starves_while_others_keep_arriving() {
    let clock = ManualClock::new();
    let limiter: TokenBucket<String, _> =
        TokenBucket::with_clock(Quota::per_second(10).with_burst(2), clock.clone());
    assert!(limiter.allow_n("k", 2));
    // The waiter: two tokens, due at 200 ms.
    let waiter = limiter.reserve("k", 2).unwrap();
    let due = waiter.ready_at_nanos();
    assert_eq!(due, 200_000_000);
    // A flood: every millisecond ten plain checks and one more waiter.
    let mut newcomers = Vec::new();
    while clock.now_nanos() < due {
        for _ in 0..10 {
            assert!(
                !limiter.allow("k"),
                "a newcomer jumped the queue at {:?}",
                clock.elapsed()
            );
        }
        newcomers.push(limiter.reserve("k", 1).unwrap().ready_at_nanos());
        clock.advance(MS);
    }
    // The waiter's turn never moved, and every newcomer was queued after it.
    assert_eq!(waiter.delay(), Duration::ZERO);
    assert!(newcomers.iter().all(|&at| at > due));
    assert!(newcomers.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn a_rechecking_waiter_is_served_once_capacity_arrives() {
    // A fixed window promises no order, but a waiter whose timeout spans a
    // window with room is served in it.
    let clock = ManualClock::new();
    let limiter: FixedWindow<String, _> =
        FixedWindow::with_clock(Quota::per_second(2), clock.clone());
    assert!(limiter.allow_n("k", 2));
    let waiter = Waiter::with_sleeper(ManualSleeper::new(clock.clone()));
    for window in 1..=3 {
        let waited = limiter
            .acquire_with(&waiter, "k", 2, Duration::from_secs(1))
            .unwrap();
        assert_eq!(waited, Duration::from_secs(1));
        assert_eq!(clock.elapsed(), Duration::from_secs(window));
    }
}

/// A sleeper that records every sleep and advances a manual clock.
struct Recording {
    clock: ManualClock,
    sleeps: Mutex<Vec<Duration>>,
}

impl Clock for Recording {
    fn now_nanos(&self) -> u64 {
        self.clock.now_nanos()
    }
}

impl Sleeper for Recording {
    fn sleep(&self, duration: Duration) {
        self.sleeps.lock().unwrap().push(duration);
        self.clock.advance(duration);
    }
}

fn recording(clock: &ManualClock) -> Recording {
    Recording {
        clock: clock.clone(),
        sleeps: Mutex::new(Vec::new()),
    }
}

#[test]
fn sleeps_come_from_the_state_not_from_polling() {
    let clock = ManualClock::new();
    let limiter: FixedWindow<String, _> =
        FixedWindow::with_clock(Quota::per_minute(1), clock.clone());
    assert!(limiter.allow("k"));
    let waiter = Waiter::with_sleeper(recording(&clock));
    limiter
        .acquire_with(&waiter, "k", 1, Duration::from_secs(60))
        .unwrap();
    assert_eq!(
        *waiter.sleeper().sleeps.lock().unwrap(),
        [Duration::from_secs(60)]
    );

    let bucket: TokenBucket<String, _> =
        TokenBucket::with_clock(Quota::per_second(1), clock.clone());
    assert!(bucket.allow("k"));
    let waiter = Waiter::with_sleeper(recording(&clock));
    bucket
        .acquire_with(&waiter, "k", 1, Duration::from_secs(1))
        .unwrap();
    assert_eq!(
        *waiter.sleeper().sleeps.lock().unwrap(),
        [Duration::from_secs(1)]
    );
}

#[test]
fn jitter_only_lengthens_and_stays_within_the_timeout() {
    let clock = ManualClock::new();
    let limiter: TokenBucket<String, _> =
        TokenBucket::with_clock(Quota::per_second(10).with_burst(1), clock.clone());
    let waiter = Waiter::with_sleeper(recording(&clock)).jitter(Jitter::up_to(50 * MS).seeded(11));
    let mut extras = Vec::new();
    for _ in 0..50 {
        clock.advance(Duration::from_secs(1)); // full again
        assert!(limiter.allow("k"));
        let waited = limiter.acquire_with(&waiter, "k", 1, 130 * MS).unwrap();
        // Due in 100 ms; jitter adds at most the 30 ms left of the timeout.
        assert!((100 * MS..=130 * MS).contains(&waited), "waited {waited:?}");
        extras.push(waited - 100 * MS);
    }
    // Not all wake-ups at the same instant.
    assert!(extras.iter().any(|&e| e != extras[0]));
    // Without a sleep there is no jitter either.
    clock.advance(Duration::from_secs(1));
    assert_eq!(
        limiter.acquire_with(&waiter, "k", 1, Duration::ZERO),
        Ok(Duration::ZERO)
    );
}

#[test]
fn a_new_key_at_the_cap_waits_by_rechecking() {
    let clock = ManualClock::new();
    let options = KeyedOptions::new().max_keys(1);
    let limiter: TokenBucket<String, _> =
        TokenBucket::with_options(Quota::per_second(10).with_burst(1), clock.clone(), options);
    assert!(limiter.allow("a")); // "a" holds the only slot, not idle for 100 ms
    assert_eq!(
        limiter.reserve("b", 1).unwrap_err(),
        WaitError::KeyCapReached
    );
    let waiter = Waiter::with_sleeper(ManualSleeper::new(clock.clone()));
    let waited = limiter
        .acquire_with(&waiter, "b", 1, Duration::from_secs(1))
        .unwrap();
    // The check's hint for an untracked key is the bucket's refill time.
    assert_eq!(waited, 100 * MS);
    assert_eq!(limiter.len(), 1);
}

#[test]
fn a_registry_waits_through_its_tiers() {
    let clock = ManualClock::new();
    let registry = Registry::builder()
        .tier(
            "free",
            TokenBucket::<String, _>::with_clock(Quota::per_second(2), clock.clone()),
        )
        .default_tier("free")
        .build()
        .unwrap();
    assert!(registry.allow_n("guest", 2));
    let waiter = Waiter::with_sleeper(ManualSleeper::new(clock.clone()));
    let waited = registry
        .acquire_with(&waiter, "guest", 1, Duration::from_secs(1))
        .unwrap();
    assert_eq!(waited, 500 * MS);
    let tier = registry.for_client("guest");
    let waited = tier
        .acquire_with(&waiter, "guest", 1, Duration::from_secs(1))
        .unwrap();
    assert_eq!(waited, 500 * MS);
}
