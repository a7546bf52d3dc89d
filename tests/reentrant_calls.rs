//! A user's key comparison may call back into the limiter that is
//! comparing it. A lookup holds this thread's cached table for its shard
//! while it compares keys and decides; the call inside may insert keys and
//! move that same table. The per-thread cache's borrow count
//! (`src/state_map.rs`) keeps the inner call from dropping the table the
//! outer one still reads, so both calls' admissions land in the live
//! states.

use std::cell::Cell;
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;
use std::time::Duration;

use tollgate::{KeyedOptions, ManualClock, Quota, RateLimiter, StoredAsIs, TokenBucket};

/// Miri runs this too, with fewer rounds.
const ROUNDS: u64 = if cfg!(miri) { 20 } else { 400 };

/// New keys each comparison starts in the limiter: enough that the one
/// shard's table moves many times while outer lookups hold it.
const STARTED_PER_COMPARISON: u64 = if cfg!(miri) { 8 } else { 25 };

/// Keys looked up from the outside, over and over.
const OUTER_KEYS: u64 = 4;

/// Tokens per key; time stands still, so none come back.
const BURST: u64 = 1_000_000;

type Limiter = TokenBucket<CallingBack, ManualClock>;

/// The one limiter the keys call back into (a test process runs tests on
/// several threads, but only this file's single test uses it).
static LIMITER: OnceLock<Limiter> = OnceLock::new();

thread_local! {
    /// Set before an outer lookup: its first comparison calls back and
    /// clears it, so the lookups the call makes, and the outer lookup's
    /// own second look under the shard lock, do not call back (a call back
    /// from under the lock would wait on that lock forever).
    static ARMED: Cell<bool> = const { Cell::new(false) };
    /// The next key a comparison starts.
    static NEXT_NEW_KEY: Cell<u64> = const { Cell::new(OUTER_KEYS) };
}

/// A key whose comparison starts new keys in [`LIMITER`].
#[derive(Clone, Debug)]
struct CallingBack(u64);

impl PartialEq for CallingBack {
    fn eq(&self, other: &Self) -> bool {
        if ARMED.replace(false) {
            let limiter = LIMITER.get().expect("limiter made first");
            for _ in 0..STARTED_PER_COMPARISON {
                let key = CallingBack(NEXT_NEW_KEY.replace(NEXT_NEW_KEY.get() + 1));
                assert!(limiter.allow(&key), "a new key was refused");
            }
        }
        self.0 == other.0
    }
}

impl Eq for CallingBack {}

impl Hash for CallingBack {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl StoredAsIs for CallingBack {}

/// Tokens `key` has left, read without spending any.
fn left(limiter: &Limiter, key: u64) -> u64 {
    let decision = limiter.check_n(&CallingBack(key), 0).expect("cost 0 fits");
    decision.remaining()
}

/// Every admission of the outer lookups, made while the calls inside moved
/// the table they were reading, shows in the keys' live states, and so
/// does every key the calls started.
#[test]
fn a_key_comparison_that_calls_back_loses_no_admission() {
    let quota = Quota::new(BURST, Duration::from_secs(3600)).expect("valid quota");
    // One shard, so every key the comparisons start moves the outer keys'
    // table as it grows.
    let options = KeyedOptions::new().shards(1);
    let limiter = LIMITER.get_or_init(|| Limiter::with_options(quota, ManualClock::new(), options));

    // Track the outer keys (no calling back yet), so later lookups of them
    // take the lock-free path through this thread's cached table, which
    // holds them even once superseded.
    for key in 0..OUTER_KEYS {
        assert!(limiter.allow(&CallingBack(key)));
    }

    for round in 0..ROUNDS {
        let key = round % OUTER_KEYS;
        ARMED.set(true);
        assert!(limiter.allow(&CallingBack(key)), "round {round}");
        assert!(!ARMED.get(), "round {round}: the lookup compared no key");
    }

    for key in 0..OUTER_KEYS {
        let admitted = 1 + ROUNDS / OUTER_KEYS;
        assert_eq!(left(limiter, key), BURST - admitted, "outer key {key}");
    }
    let started = NEXT_NEW_KEY.get();
    assert!(
        started > OUTER_KEYS + 1_000 || cfg!(miri),
        "only {started} keys"
    );
    for key in (OUTER_KEYS..started).step_by(7) {
        assert_eq!(left(limiter, key), BURST - 1, "started key {key}");
    }
    assert_eq!(limiter.len(), usize::try_from(started).expect("fits"));
}
