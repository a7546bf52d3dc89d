//! Memory stays bounded under key churn, and evicting idle keys never changes
//! a decision.

mod common;

use std::collections::VecDeque;
use std::time::Duration;

use common::{Figures, SplitMix64};
use tollgate::{
    Algorithm, Clock, FixedWindowRule, KeyedLimiter, KeyedOptions, ManualClock, Quota, RateLimiter,
    SlidingWindowCounterRule, SlidingWindowLogRule, TokenBucket, TokenBucketRule,
};

type Limiter<A> = KeyedLimiter<A, u64, ManualClock>;

/// A key never evicts while in use: 4 units per 100 µs (every key is fresh
/// again at most two windows after its last admission).
fn churn_quota() -> Quota {
    Quota::new(4, Duration::from_micros(100)).unwrap()
}

const INTERVAL: usize = 1024;

/// One random step: which key, what cost, how far the clock moves.
struct Churn {
    rng: SplitMix64,
    next_key: u64,
}

impl Churn {
    fn new(seed: u64) -> Self {
        Churn {
            rng: SplitMix64::new(seed),
            next_key: 0,
        }
    }

    /// Mostly brand-new keys; some recent ones (maybe still tracked), some
    /// long-gone ones (evicted by now).
    fn key(&mut self) -> u64 {
        match self.rng.below(16) {
            0 if self.next_key > 0 => self.next_key - 1 - self.rng.below(self.next_key.min(300)),
            1 if self.next_key > 0 => self.rng.below(self.next_key),
            _ => {
                self.next_key += 1;
                self.next_key - 1
            }
        }
    }

    fn advance(&mut self) -> u64 {
        if self.rng.one_in(5_000) {
            300_000
        } else {
            self.rng.below(2_001)
        }
    }
}

/// Runs `steps` churn steps on an auto-sweeping limiter, a limiter swept by
/// hand every 1000 steps, and one that never evicts; all decisions must agree
/// and the evicting ones must stay small. Returns the distinct keys used.
fn side_by_side<A: Algorithm>(steps: usize, seed: u64) -> u64 {
    let clock = ManualClock::new();
    let quota = churn_quota();
    let auto = Limiter::<A>::with_options(quota, clock.clone(), KeyedOptions::new());
    let manual =
        Limiter::<A>::with_options(quota, clock.clone(), KeyedOptions::new().auto_sweep(false));
    let never =
        Limiter::<A>::with_options(quota, clock.clone(), KeyedOptions::new().auto_sweep(false));
    let reset_bound = 2 * quota.window_nanos();
    let mut churn = Churn::new(seed);
    // Times of recent steps: an upper bound on keys that may still be in use.
    let mut recent: VecDeque<u64> = VecDeque::new();
    // The automatic sweep also keeps keys fresh for less than its grace (the
    // rule's reset bound, at most `reset_bound` here).
    let mut recent_for_auto: VecDeque<u64> = VecDeque::new();
    let mut peak_in_use = 0;
    let mut dropped_by_hand = 0;
    let max = auto.rule().max_cost();
    for step in 0..steps {
        clock.advance(Duration::from_nanos(churn.advance()));
        let now = clock.now_nanos();
        let key = churn.key();
        let cost = churn.rng.up_to(max);
        let want = never.check_n(&key, cost).unwrap();
        assert_eq!(auto.check_n(&key, cost).unwrap(), want, "auto, step {step}");
        assert_eq!(
            manual.check_n(&key, cost).unwrap(),
            want,
            "manual, step {step}"
        );
        recent.push_back(now);
        while recent.front().is_some_and(|&t| t + reset_bound < now) {
            recent.pop_front();
        }
        recent_for_auto.push_back(now);
        while recent_for_auto
            .front()
            .is_some_and(|&t| t + 2 * reset_bound < now)
        {
            recent_for_auto.pop_front();
        }
        peak_in_use = peak_in_use.max(recent_for_auto.len());
        if step % 1000 == 999 {
            dropped_by_hand += manual.evict_idle();
            assert!(manual.len() <= recent.len(), "only keys in use are left");
        }
        if step % 97 == 0 {
            // The documented bound: about twice the keys in use plus the
            // sweep interval (keys in use at the last sweep count too, so
            // take the peak).
            let bound = 2 * peak_in_use + INTERVAL;
            assert!(auto.len() <= bound, "step {step}: {} > {bound}", auto.len());
        }
    }
    // Every key but those only ever peeked at is kept by the reference and
    // dropped by hand (bar the last few still in use).
    let kept = never.len() as u64;
    assert!(kept <= churn.next_key && kept > churn.next_key / 2);
    assert!(dropped_by_hand as u64 + 1_000 >= kept);
    churn.next_key
}

#[test]
fn a_million_keys_of_churn_token_bucket() {
    let distinct = side_by_side::<TokenBucketRule>(1_200_000, 1);
    assert!(distinct >= 1_000_000, "{distinct}");
}

#[test]
fn a_million_keys_of_churn_fixed_window() {
    let distinct = side_by_side::<FixedWindowRule>(1_200_000, 2);
    assert!(distinct >= 1_000_000, "{distinct}");
}

#[test]
fn churn_sliding_counter() {
    side_by_side::<SlidingWindowCounterRule>(200_000, 3);
}

#[test]
fn churn_sliding_log() {
    side_by_side::<SlidingWindowLogRule>(200_000, 4);
}

#[test]
fn a_cap_bounds_the_keys_under_a_million_key_churn() {
    const CAP: usize = 5_000;
    let clock = ManualClock::new();
    let quota = churn_quota();
    // Auto sweep keeps the map below the cap: no key is ever refused, so the
    // decisions equal those of a limiter with no cap and no eviction.
    let capped: TokenBucket<u64, _> =
        TokenBucket::with_options(quota, clock.clone(), KeyedOptions::new().max_keys(CAP));
    let never: TokenBucket<u64, _> =
        TokenBucket::with_options(quota, clock.clone(), KeyedOptions::new().auto_sweep(false));
    // Only the cap: new keys are refused while it is full of busy keys.
    let only_cap: TokenBucket<u64, _> = TokenBucket::with_options(
        quota,
        clock.clone(),
        KeyedOptions::new().max_keys(CAP).auto_sweep(false),
    );
    let reset_bound = 100_000;
    let mut churn = Churn::new(9);
    let (mut refused, mut admitted_after_refusal) = (0, 0);
    for step in 0..1_200_000 {
        clock.advance(Duration::from_nanos(churn.advance()));
        let key = churn.key();
        // Costs up to 3 (< τ / T = 4): a tracked key's rejection then waits
        // less than τ, so a refusal at the cap (which waits τ) stands out.
        let cost = 1 + churn.rng.below(3);
        let want = never.check_n(&key, cost).unwrap();
        assert_eq!(capped.check_n(&key, cost).unwrap(), want, "step {step}");
        let got = only_cap.check_n(&key, cost).unwrap();
        if Figures::from(got) == Figures::reject(4, 0, reset_bound, reset_bound) {
            refused += 1;
        } else if refused > 0 && got.allowed() {
            admitted_after_refusal += 1;
        }
        if step % 1000 == 0 {
            assert!(capped.len() <= CAP && only_cap.len() <= CAP, "step {step}");
        }
    }
    assert!(churn.next_key >= 1_000_000);
    // The cap was reached, and sweeps at the cap made room again.
    assert!(refused > 0 && admitted_after_refusal > 100_000);
}

#[test]
fn evict_idle_returns_the_number_dropped() {
    // 10/s: T = 100 ms; a key that spent n tokens is full again after n·T.
    let clock = ManualClock::new();
    let limiter: TokenBucket<u64, _> = TokenBucket::with_options(
        Quota::per_second(10),
        clock.clone(),
        KeyedOptions::new().auto_sweep(false),
    );
    for key in 0..10u64 {
        assert!(limiter.allow_n(&key, 1 + key % 3));
    }
    assert_eq!(limiter.len(), 10);
    assert_eq!(limiter.evict_idle(), 0, "every key is still refilling");
    clock.advance(Duration::from_millis(100));
    // Keys 0, 3, 6, 9 spent one token.
    assert_eq!(limiter.evict_idle(), 4);
    assert_eq!(limiter.len(), 6);
    assert_eq!(limiter.evict_idle(), 0);
    clock.advance(Duration::from_millis(200));
    assert_eq!(limiter.evict_idle(), 6);
    assert!(limiter.is_empty());
    // An evicted key starts over with a full bucket, as it would have anyway.
    assert_eq!(limiter.check_n(&1, 10).unwrap().remaining(), 0);
}

#[test]
fn evict_idle_for_window_algorithms() {
    fn run<A: Algorithm>(idle_after: Duration) {
        let clock = ManualClock::new();
        let limiter = Limiter::<A>::with_options(
            Quota::per_second(5),
            clock.clone(),
            KeyedOptions::new().auto_sweep(false),
        );
        assert!(limiter.allow(&1) && limiter.allow(&2));
        assert_eq!(limiter.evict_idle(), 0);
        clock.advance(idle_after - Duration::from_nanos(1));
        assert_eq!(limiter.evict_idle(), 0);
        clock.advance(Duration::from_nanos(1));
        assert_eq!(limiter.evict_idle(), 2);
        assert!(limiter.is_empty());
    }
    let second = Duration::from_secs(1);
    run::<FixedWindowRule>(second);
    run::<SlidingWindowLogRule>(second);
    // The counter's last window keeps weighing through the next one.
    run::<SlidingWindowCounterRule>(2 * second);
}

#[test]
fn a_new_key_at_the_cap_is_rejected_and_tracked_keys_lose_nothing() {
    let clock = ManualClock::new();
    // 10/s: T = 100 ms, τ = 1 s.
    let limiter: TokenBucket<u64, _> = TokenBucket::with_options(
        Quota::per_second(10),
        clock.clone(),
        KeyedOptions::new().max_keys(2).auto_sweep(false),
    );
    assert!(limiter.allow_n(&1, 6));
    assert!(limiter.allow_n(&2, 3));
    let d = limiter.check(&3);
    assert!(!d.allowed());
    // Refused: nothing left for it, worth retrying once a key can be full again.
    assert_eq!((d.remaining(), d.retry_after_nanos()), (0, 1_000_000_000));
    assert_eq!(limiter.len(), 2);
    // A peek at an untracked key needs no room.
    assert!(limiter.check_n(&3, 0).unwrap().allowed());
    // The tracked keys kept their state: 4 and 7 tokens left.
    assert_eq!(limiter.check_n(&1, 0).unwrap().remaining(), 4);
    assert_eq!(limiter.check_n(&2, 0).unwrap().remaining(), 7);
    assert!(limiter.allow_n(&1, 4));
    assert!(!limiter.allow(&1));
    // Key 2 is full again after 3·T = 300 ms; the next refused key sweeps it.
    clock.advance(Duration::from_millis(300));
    assert!(limiter.allow(&3));
    assert_eq!(limiter.len(), 2);
    // Key 1 spent all 10: after 300 ms only 3 are back.
    assert_eq!(limiter.check_n(&1, 0).unwrap().remaining(), 3);
}
