//! The keyed store: per-key states in a [`StateMap`], with an optional cap
//! on tracked keys and an amortised sweep of idle ones.

use crossbeam_utils::CachePadded;

use crate::key::Key;
use crate::options::KeyedOptions;
use crate::retire::Retire;
use crate::state_map::{Found, StateMap};
use crate::sync::{AtomicU64, AtomicUsize, Ordering};

/// Counters touched only when keys come and go, padded away from the map
/// header that every lookup reads.
#[derive(Default)]
struct Bookkeeping {
    /// Under a key cap: keys in the map plus slots reserved by insertions
    /// in flight. Unused without a cap, so uncapped insertions skip it.
    tracked: AtomicUsize,
    /// Insertions since the last automatic sweep, added in per-shard
    /// batches (see `Store::count_batch`).
    since_sweep: AtomicUsize,
    /// New keys refused at the cap, to space out sweeps made for room.
    refused_at_cap: AtomicUsize,
    /// Insertions after which the next automatic sweep runs.
    sweep_due: AtomicUsize,
    /// The latest clock reading any sweep judged states at.
    swept_at: AtomicU64,
}

/// Per-key states of type `V` under keys `K`.
pub(crate) struct Store<K: Key, V: Send + Sync> {
    map: StateMap<K, V>,
    /// Padded: insertions write these, lookups never do. The padding also
    /// aligns the whole limiter, so it fills cache lines of its own
    /// (`tests/own_lines.rs`).
    books: CachePadded<Bookkeeping>,
    options: KeyedOptions,
    /// How long a state must have been fresh for the automatic sweep.
    grace: u64,
    /// A shard adds its insertions to `since_sweep` once per this many, so
    /// most insertions write no counter outside their shard. A power of
    /// two, so a new key tests its turn with a mask, not a division.
    count_batch: usize,
}

/// The largest batch of insertions a shard counts at once.
const MAX_COUNT_BATCH: usize = 64;

/// What happened to a request for a key the store did not hold.
pub(crate) enum Inserted<R> {
    /// The key is tracked now and `f` ran on its state.
    Ran(R),
    /// The cap is reached and nothing could be swept: the key is not tracked.
    Full,
}

impl<K: Key, V: Retire + Send + Sync> Store<K, V> {
    /// A store; `default_grace` applies unless `options` sets a grace.
    pub(crate) fn new(options: KeyedOptions, default_grace: u64) -> Self {
        let books = Bookkeeping::default();
        // Relaxed: the store is not shared yet; sharing it publishes this.
        books
            .sweep_due
            .store(options.min_sweep_interval, Ordering::Relaxed);
        let map = StateMap::new(options.shards, options.table_fill, options.robust_hash);
        // Batches small enough that all shards together hold back at most
        // half the minimum interval, rounded down to a power of two.
        let batch =
            (options.min_sweep_interval / (2 * map.shard_count())).clamp(1, MAX_COUNT_BATCH);
        let count_batch = 1 << batch.ilog2();
        Store {
            map,
            books: CachePadded::new(books),
            options,
            grace: options.sweep_grace_nanos.unwrap_or(default_grace),
            count_batch,
        }
    }

    /// Runs `f` on the state for `key` without a lock; `None` when this
    /// thread's view misses the key or `f` found the state retired, and the
    /// caller must look again with [`read_locked`](Self::read_locked) or
    /// [`insert_and`](Self::insert_and).
    #[inline]
    pub(crate) fn read<R>(&self, key: &K::Lookup, f: impl FnOnce(&V) -> Option<R>) -> Option<R> {
        self.map.read(key, f)
    }

    /// Runs `f` on `key`'s live state and the time to judge it at (see
    /// [`insert_and`](Self::insert_and)); `None` if the key is not tracked.
    pub(crate) fn read_locked<R>(
        &self,
        key: &K::Lookup,
        now: u64,
        f: impl FnOnce(&V, u64) -> R,
    ) -> Option<R> {
        self.map
            .read_locked(key, |state| f(state, self.judge_at(now)))
    }

    /// The time to judge a key at under its shard's lock: `now`, or the
    /// later reading a sweep already judged states at.
    fn judge_at(&self, now: u64) -> u64 {
        // Relaxed: a sweep raises `swept_at` before it takes any shard lock
        // to retire states, and the caller holds the lock of the key's
        // shard, so a sweep that retired this key is ordered before it.
        now.max(self.books.swept_at.load(Ordering::Relaxed))
    }

    /// Tracks `key` (fresh state from `make`) and runs `f` on its state,
    /// sweeping states for which `idle` holds when the cap or the automatic
    /// sweep asks for it.
    ///
    /// `f` and `idle` get the time to judge at: `now`, or a later reading a
    /// sweep already judged at. A request whose clock reading predates a
    /// sweep that removed its key is judged as of that sweep, when its old
    /// state was known to equal a fresh one, so the removal cannot change
    /// its outcome.
    pub(crate) fn insert_and<R>(
        &self,
        key: &K::Lookup,
        now: u64,
        make: impl FnOnce() -> V,
        f: impl Fn(&V, u64) -> R,
        idle: impl Fn(&V, u64) -> bool,
    ) -> Inserted<R> {
        // With a cap, a slot is reserved before the shard lock is taken,
        // because a reservation may sweep every shard; without one, only the
        // shard counts its keys.
        let reserved = match self.options.max_keys {
            Some(cap) => {
                // A lock-free miss may only mean this thread's view is stale:
                // a key still tracked needs no slot, even at the cap.
                if let Some(result) = self.read_locked(key, now, &f) {
                    return Inserted::Ran(result);
                }
                if !self.reserve_slot(cap, now, &idle) {
                    return Inserted::Full;
                }
                true
            }
            None => false,
        };
        let (result, found) = self.map.read_or_insert(key, make, |state, found| {
            if reserved && found == Found::Live {
                // Another thread inserted it first: give the slot back.
                // Relaxed: a count; the map's locks order the entries.
                self.books.tracked.fetch_sub(1, Ordering::Relaxed);
            }
            (f(state, self.judge_at(now)), found)
        });
        if let Found::Started { in_shard } = found
            && self.options.auto_sweep
            && in_shard & (self.count_batch - 1) == 0
        {
            self.maybe_auto_sweep(now, &idle);
        }
        Inserted::Ran(result)
    }

    /// Takes one slot under the cap; false when the cap is reached even
    /// after a sweep.
    fn reserve_slot(&self, cap: usize, now: u64, idle: &impl Fn(&V, u64) -> bool) -> bool {
        for attempt in 0..2 {
            // Relaxed: a reservation is one CAS from below the cap, so at
            // most `cap` succeed whatever the interleaving; nothing else is
            // published with it. A refused attempt writes nothing, so it
            // never makes a concurrent reservation fail.
            let reserved =
                self.books
                    .tracked
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |taken| {
                        (taken < cap).then_some(taken + 1)
                    });
            if reserved.is_ok() {
                return true;
            }
            if attempt == 0 && !self.sweep_at_cap(cap, now, idle) {
                return false;
            }
        }
        false
    }

    /// At the cap: sweeps once per `cap / 8` refusals; true if it swept.
    #[cold]
    fn sweep_at_cap(&self, cap: usize, now: u64, idle: &impl Fn(&V, u64) -> bool) -> bool {
        let every = (cap / 8).max(1);
        // Relaxed: a heuristic counter; a lost race only shifts a sweep.
        let refused = self.books.refused_at_cap.fetch_add(1, Ordering::Relaxed);
        if !refused.is_multiple_of(every) {
            return false;
        }
        self.sweep(now, idle) > 0
    }

    #[inline]
    fn maybe_auto_sweep(&self, now: u64, idle: &impl Fn(&V, u64) -> bool) {
        // Relaxed: heuristic counters; the claim below is a single RMW, so
        // exactly one thread runs each due sweep.
        let since = self
            .books
            .since_sweep
            .fetch_add(self.count_batch, Ordering::Relaxed)
            + self.count_batch;
        let due = self.books.sweep_due.load(Ordering::Relaxed);
        if since < due {
            return;
        }
        if self
            .books
            .since_sweep
            .compare_exchange(since, 0, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            self.auto_sweep(now, idle);
        }
    }

    #[cold]
    fn auto_sweep(&self, now: u64, idle: &impl Fn(&V, u64) -> bool) {
        // A state fresh at `now - grace` has stayed fresh since, so it is
        // fresh at `now` too and may go.
        let judge_at = now.saturating_sub(self.grace);
        self.sweep(now, |state, _| idle(state, judge_at));
        let left = self.map.len();
        // Relaxed: only sets when the next sweep is due.
        self.books
            .sweep_due
            .store(left.max(self.options.min_sweep_interval), Ordering::Relaxed);
    }

    /// Drops every state for which `idle` holds at `now`; returns how many.
    ///
    /// Each state is retired by one atomic step that only succeeds on the
    /// value judged idle, so no update lands between the test and the
    /// removal; later updates see it retired and look again.
    pub(crate) fn sweep(&self, now: u64, idle: impl Fn(&V, u64) -> bool) -> usize {
        // Relaxed: published to inserters through the shard locks taken below.
        let now = now.max(self.books.swept_at.fetch_max(now, Ordering::Relaxed));
        let removed = self.map.sweep(|state| idle(state, now));
        if self.options.max_keys.is_some() {
            // Relaxed: a count; the map's locks already ordered the removals.
            self.books.tracked.fetch_sub(removed, Ordering::Relaxed);
        }
        removed
    }

    /// Keys tracked now.
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// See [`StateMap::switch_to_folding`].
    #[cfg(tollgate_loom)]
    pub(crate) fn switch_to_folding(&self) {
        self.map.switch_to_folding();
    }
}

#[cfg(all(test, not(tollgate_loom)))]
mod tests {
    use super::*;
    use crate::packed_word::PackedWord;

    /// A state that is the time it became fresh.
    fn fresh_since(state: &PackedWord, at: u64) -> bool {
        state.load() <= at
    }

    fn store_with_one_key(fresh_at: u64) -> Store<u64, PackedWord> {
        let options = KeyedOptions::new().min_sweep_interval(1);
        let store = Store::new(options, 1_000);
        let inserted =
            store.insert_and(&1, 0, || PackedWord::new(fresh_at), |_, _| (), fresh_since);
        assert!(matches!(inserted, Inserted::Ran(())));
        store
    }

    /// The option reaches the map that hashes the keys.
    #[test]
    fn the_robust_hash_option_reaches_the_map() {
        for robust in [false, true] {
            let options = KeyedOptions::new().robust_hash(robust);
            let store: Store<u64, PackedWord> = Store::new(options, 1_000);
            assert_eq!(store.map.hashes_robustly(), robust);
        }
    }

    #[test]
    fn the_automatic_sweep_keeps_a_key_fresh_for_less_than_the_grace() {
        let store = store_with_one_key(500);
        // Fresh for 700 of the 1000 grace: kept.
        store.auto_sweep(1_200, &fresh_since);
        assert_eq!(store.len(), 1);
        // Fresh for 1100: dropped.
        store.auto_sweep(1_600, &fresh_since);
        assert_eq!(store.len(), 0);
    }

    #[test]
    fn an_explicit_sweep_ignores_the_grace() {
        let store = store_with_one_key(500);
        assert_eq!(store.sweep(600, fresh_since), 1);
        assert_eq!(store.len(), 0);
    }

    #[test]
    fn insertions_counted_in_batches_still_start_sweeps() {
        // 4 shards and an interval of 256: each shard counts 32 at a time.
        let options = KeyedOptions::new().min_sweep_interval(256).shards(4);
        let store: Store<u64, PackedWord> = Store::new(options, 1_000);
        assert_eq!(store.count_batch, 32);
        // An interval that does not divide into a power of two rounds down.
        let uneven = KeyedOptions::new().min_sweep_interval(300).shards(4);
        let uneven_store: Store<u64, PackedWord> = Store::new(uneven, 1_000);
        assert_eq!(uneven_store.count_batch, 32);
        // Fewer under Miri, which interprets every step; still many sweeps.
        let keys = if cfg!(miri) { 2_000 } else { 10_000 };
        for key in 0..keys {
            // Fresh since 0 and judged at 10_000: idle past the grace.
            let _ = store.insert_and(&key, 10_000, || PackedWord::new(0), |_, _| (), fresh_since);
        }
        // Without sweeps all would stay; batching holds back at most
        // 4 x 31 insertions on top of the interval.
        let left = store.len();
        assert!(left <= 256 + 4 * 31, "{left} keys left");
    }

    #[test]
    fn a_set_grace_replaces_the_default() {
        let options = KeyedOptions::new().sweep_grace(std::time::Duration::from_nanos(10));
        let store: Store<u64, PackedWord> = Store::new(options, 1_000);
        let _ = store.insert_and(&1, 0, || PackedWord::new(500), |_, _| (), fresh_since);
        store.auto_sweep(511, &fresh_since);
        assert_eq!(store.len(), 0);
    }
}
