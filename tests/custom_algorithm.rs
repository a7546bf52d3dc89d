//! A rule written outside the crate plugs into the keyed store, the direct
//! limiter, the `RateLimiter` trait and `Acquire`, and keeps its decisions
//! through eviction and table moves, using only the public `Algorithm`,
//! `Retire` and `RechecksWhenWaiting` traits and their default methods.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use common::SplitMix64;
use tollgate::wait::{Acquire, ManualSleeper, RechecksWhenWaiting, WaitError, Waiter};
use tollgate::{
    Algorithm, Decision, DirectLimiter, InsufficientCapacity, KeyedLimiter, KeyedOptions,
    ManualClock, Quota, RateLimiter, Retire,
};

/// One unit per `window / limit`, evenly spaced, with no burst: what a user
/// might add for a backend that takes no bursts at all.
#[derive(Debug)]
struct SpacingRule {
    gap: u64,
}

/// One key's state: 0 while fresh, else one more than the earliest time
/// the next unit may pass; [`SpacingWord::RETIRED`] once retired.
#[derive(Debug)]
struct SpacingWord(AtomicU64);

/// Relaxed for every access: the word is the whole state and publishes
/// nothing else (as with `PackedWord`); the store orders what it needs
/// around retired states itself.
const WORD_ORDER: Ordering = Ordering::Relaxed;

impl SpacingWord {
    const RETIRED: u64 = u64::MAX;

    fn new(word: u64) -> Self {
        SpacingWord(AtomicU64::new(word))
    }

    fn load(&self) -> u64 {
        self.0.load(WORD_ORDER)
    }
}

impl Retire for SpacingWord {
    fn is_retired(&self) -> bool {
        self.load() == Self::RETIRED
    }

    fn retire_if(&self, idle: impl Fn(&Self) -> bool) -> bool {
        let word = self.load();
        // Judged on a copy, so the exchange retires exactly what was judged.
        word != Self::RETIRED
            && idle(&SpacingWord::new(word))
            && self
                .0
                .compare_exchange(word, Self::RETIRED, WORD_ORDER, WORD_ORDER)
                .is_ok()
    }

    fn retire_and_take(&self) -> Option<Self> {
        let word = self.0.swap(Self::RETIRED, WORD_ORDER);
        (word != Self::RETIRED).then(|| SpacingWord::new(word))
    }

    fn revive(&self, fresh: Self) {
        self.0.store(fresh.load(), WORD_ORDER);
    }
}

impl SpacingRule {
    /// When the next unit may pass, for a stored word.
    fn next_at(word: u64) -> u64 {
        word.saturating_sub(1)
    }
}

impl Algorithm for SpacingRule {
    type State = SpacingWord;

    fn from_quota(quota: &Quota) -> Self {
        SpacingRule {
            gap: quota.window_nanos() / quota.limit(),
        }
    }

    fn fresh(&self) -> SpacingWord {
        SpacingWord::new(0)
    }

    fn limit(&self) -> u64 {
        1
    }

    fn check(&self, state: &SpacingWord, now: u64, cost: u64) -> Option<Decision> {
        loop {
            let word = state.load();
            if word == SpacingWord::RETIRED {
                return None;
            }
            let next_at = Self::next_at(word);
            if now < next_at {
                let wait = next_at - now;
                return Some(Decision::reject(1, 0, wait, wait));
            }
            if cost == 0 {
                return Some(Decision::admit(1, 1, 0));
            }
            let spent = now.saturating_add(self.gap).saturating_add(1);
            if state
                .0
                .compare_exchange(word, spent, WORD_ORDER, WORD_ORDER)
                .is_ok()
            {
                return Some(Decision::admit(1, 0, self.gap));
            }
        }
    }

    fn is_fresh(&self, state: &SpacingWord, now: u64) -> bool {
        now >= Self::next_at(state.load())
    }

    fn reset_bound_nanos(&self) -> u64 {
        self.gap
    }
}

type Spacing<K = String> = KeyedLimiter<SpacingRule, K, ManualClock>;

/// Ten units a second: one every 100 ms.
fn ten_a_second() -> Quota {
    Quota::per_second(10)
}

#[test]
fn a_custom_rule_decides_through_the_keyed_limiter() {
    let clock = ManualClock::new();
    let limiter = Spacing::<String>::with_clock(ten_a_second(), clock.clone());
    assert!(limiter.allow("a"));
    let denied = limiter.check("a");
    assert!(!denied.allowed());
    assert_eq!(denied.retry_after(), Duration::from_millis(100));
    // Keys are apart, and a peek spends nothing.
    assert!(limiter.check_n("b", 0).unwrap().allowed());
    assert!(limiter.allow("b"));
    // The default `max_cost` is the limit: more is an error, not a denial.
    assert_eq!(
        limiter.check_n("c", 2),
        Err(InsufficientCapacity {
            requested: 2,
            max: 1
        })
    );
    assert!(!limiter.allow_n("c", 2));
    clock.advance(Duration::from_millis(99));
    assert!(!limiter.allow("a"));
    clock.advance(Duration::from_millis(1));
    assert!(limiter.allow("a"));
    assert!(limiter.allow("c"), "the refused cost spent nothing");
}

#[test]
fn a_custom_rule_serves_as_a_trait_object_and_a_direct_limiter() {
    let clock = ManualClock::new();
    let keyed: Box<dyn RateLimiter<str>> =
        Box::new(Spacing::<String>::with_clock(ten_a_second(), clock.clone()));
    let direct = DirectLimiter::<SpacingRule, _>::with_clock(ten_a_second(), clock.clone());
    for _ in 0..3 {
        assert!(keyed.allow("k"));
        assert!(!keyed.allow("k"));
        assert!(direct.allow());
        assert!(!direct.allow());
        assert_eq!(direct.check_n(1).unwrap().retry_after_nanos(), 100_000_000);
        clock.advance(Duration::from_millis(100));
    }
}

/// Opts the rule into `Acquire` on its limiters, which wait by re-checking.
impl RechecksWhenWaiting for SpacingRule {}

#[test]
fn waiting_on_a_custom_rule_sleeps_its_retry_hint() {
    let clock = ManualClock::new();
    let keyed = Spacing::<String>::with_clock(ten_a_second(), clock.clone());
    let direct = DirectLimiter::<SpacingRule, _>::with_clock(ten_a_second(), clock.clone());
    let waiter = Waiter::with_sleeper(ManualSleeper::new(clock.clone()));
    let timeout = Duration::from_secs(1);
    let waited = keyed.acquire_with(&waiter, "k", 1, timeout).unwrap();
    assert_eq!(waited, Duration::ZERO);
    let waited = keyed.acquire_with(&waiter, "k", 1, timeout).unwrap();
    assert_eq!(waited, Duration::from_millis(100));
    assert_eq!(clock.elapsed(), Duration::from_millis(100));
    let too_soon = keyed.acquire_with(&waiter, "k", 1, Duration::from_millis(50));
    assert!(matches!(too_soon, Err(WaitError::Timeout { .. })));
    assert_eq!(
        clock.elapsed(),
        Duration::from_millis(100),
        "it never slept"
    );
    // The direct limiter's unit went unspent while the keyed one waited.
    assert_eq!(
        direct.acquire_with(&waiter, &(), 1, timeout).unwrap(),
        Duration::ZERO
    );
    let waited = direct.acquire_with(&waiter, &(), 1, timeout).unwrap();
    assert_eq!(waited, Duration::from_millis(100));
    // The explicit loop behind `Acquire` waits alike: the keyed unit came
    // due while the direct limiter waited.
    for expected in [Duration::ZERO, Duration::from_millis(100)] {
        let waited = waiter.acquire_retrying(&keyed, "k", 1, timeout).unwrap();
        assert_eq!(waited, expected);
    }
    assert_eq!(clock.elapsed(), Duration::from_millis(300));
}

#[cfg(feature = "tokio")]
#[tokio::test(flavor = "current_thread")]
async fn waiting_on_a_custom_rule_without_blocking_sleeps_its_retry_hint() {
    let clock = ManualClock::new();
    let limiter = Spacing::<String>::with_clock(ten_a_second(), clock.clone());
    let waiter = Waiter::with_sleeper(ManualSleeper::new(clock.clone()));
    let timeout = Duration::from_secs(1);
    for expected in [Duration::ZERO, Duration::from_millis(100)] {
        let waited = limiter.acquire_async_with(&waiter, "k", 1, timeout).await;
        assert_eq!(waited.unwrap(), expected);
    }
    let over_cost = limiter.acquire_async_with(&waiter, "k", 2, timeout).await;
    assert!(matches!(over_cost, Err(WaitError::Capacity(_))));
    assert_eq!(clock.elapsed(), Duration::from_millis(100));
}

#[test]
fn eviction_drops_idle_keys_of_a_custom_rule_without_changing_a_decision() {
    let clock = ManualClock::new();
    let quota = ten_a_second();
    let evicting = Spacing::<u64>::with_clock(quota, clock.clone());
    let keeping =
        Spacing::<u64>::with_options(quota, clock.clone(), KeyedOptions::new().auto_sweep(false));
    let mut rng = SplitMix64::new(7);
    let mut dropped = 0;
    for step in 0..200_000u64 {
        clock.advance(Duration::from_micros(rng.below(40)));
        // Mostly new keys, some recent ones that may still be spaced out.
        let key = if rng.one_in(4) {
            step.saturating_sub(rng.below(5_000))
        } else {
            step
        };
        let cost = rng.below(2);
        assert_eq!(
            evicting.check_n(&key, cost),
            keeping.check_n(&key, cost),
            "step {step}, key {key}"
        );
        if step % 10_000 == 9_999 {
            dropped += evicting.evict_idle();
        }
    }
    // Time covered: about 4 s, so keys older than 100 ms are idle.
    assert!(dropped > 0, "idle keys were dropped by hand");
    assert!(
        evicting.len() * 4 < keeping.len(),
        "{} kept against {}",
        evicting.len(),
        keeping.len()
    );
    clock.advance(Duration::from_millis(100));
    evicting.evict_idle();
    assert!(evicting.is_empty(), "every key is idle a gap later");
}

#[test]
fn a_spent_custom_state_survives_table_moves_under_threads() {
    // Time never moves, so the hot key may pass exactly once, however its
    // state is moved while new keys grow its shard's table.
    const CHECKERS: usize = 3;
    const INSERTERS: u64 = 2;
    const NEW_KEYS: u64 = 20_000;
    let limiter = Arc::new(Spacing::<u64>::with_options(
        ten_a_second(),
        ManualClock::new(),
        KeyedOptions::new().shards(1),
    ));
    let admitted = Arc::new(AtomicU64::new(0));
    let start = Arc::new(Barrier::new(CHECKERS + INSERTERS as usize));
    let mut threads = Vec::new();
    for _ in 0..CHECKERS {
        let (limiter, admitted, start) = (limiter.clone(), admitted.clone(), start.clone());
        threads.push(thread::spawn(move || {
            start.wait();
            for _ in 0..NEW_KEYS {
                if limiter.allow(&u64::MAX) {
                    // Relaxed: a count read after the threads are joined.
                    admitted.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for inserter in 0..INSERTERS {
        let (limiter, start) = (limiter.clone(), start.clone());
        threads.push(thread::spawn(move || {
            start.wait();
            for key in (inserter..NEW_KEYS).step_by(INSERTERS as usize) {
                assert!(limiter.allow(&key), "key {key} is new");
            }
        }));
    }
    for thread in threads {
        thread.join().unwrap();
    }
    // Relaxed: `join` ordered every increment before this load.
    assert_eq!(admitted.load(Ordering::Relaxed), 1);
    assert_eq!(limiter.len() as u64, NEW_KEYS + 1);
    assert!(!limiter.allow(&u64::MAX));
}
