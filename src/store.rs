//! The keyed store: per-key states in a [`ShardMap`], with an optional cap
//! on tracked keys and an amortised sweep of idle ones.

use std::borrow::Borrow;
use std::hash::Hash;

use crossbeam_utils::CachePadded;

use crate::options::KeyedOptions;
use crate::shard_map::ShardMap;
use crate::sync::{AtomicUsize, Ordering};

/// Counters touched only when keys come and go, padded away from the map
/// header that every lookup reads.
#[derive(Default)]
struct Bookkeeping {
    /// Keys in the map plus slots reserved by insertions in flight.
    tracked: AtomicUsize,
    /// Insertions (or refused insertions, at the cap) since the last sweep.
    since_sweep: AtomicUsize,
    /// Insertions after which the next automatic sweep runs.
    sweep_due: AtomicUsize,
}

/// Per-key states of type `V` under keys `K`.
pub(crate) struct Store<K, V> {
    map: ShardMap<K, V>,
    books: CachePadded<Bookkeeping>,
    options: KeyedOptions,
}

/// What happened to a request for a key the store did not hold.
pub(crate) enum Inserted<R> {
    /// The key is tracked now and `f` ran on its state.
    Ran(R),
    /// The cap is reached and nothing could be swept: the key is not tracked.
    Full,
}

impl<K: Hash + Eq, V> Store<K, V> {
    pub(crate) fn new(options: KeyedOptions) -> Self {
        let books = Bookkeeping::default();
        books
            .sweep_due
            .store(options.min_sweep_interval, Ordering::Relaxed);
        Store {
            map: ShardMap::new(options.shards),
            books: CachePadded::new(books),
            options,
        }
    }

    /// Runs `f` on the state for `key` if it is tracked.
    #[inline]
    pub(crate) fn read<Q, R>(&self, key: &Q, f: impl FnOnce(&V) -> R) -> Option<R>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.read(key, f)
    }

    /// Tracks `key` (fresh state from `make`) and runs `f` on its state,
    /// sweeping states for which `idle` holds when the cap or the automatic
    /// sweep asks for it.
    pub(crate) fn insert_and<R>(
        &self,
        key: K,
        make: impl FnOnce() -> V,
        f: impl FnOnce(&V) -> R,
        idle: impl Fn(&V) -> bool,
    ) -> Inserted<R> {
        if !self.reserve_slot(&idle) {
            return Inserted::Full;
        }
        let result = self.map.read_or_insert(key, make, |state, inserted| {
            if !inserted {
                // Another thread inserted it first: give the slot back.
                // Relaxed: a plain counter; the map's locks order the entries.
                self.books.tracked.fetch_sub(1, Ordering::Relaxed);
            }
            f(state)
        });
        if self.options.auto_sweep {
            self.maybe_auto_sweep(&idle);
        }
        Inserted::Ran(result)
    }

    /// Takes one slot under the cap; false when the cap is reached even
    /// after a sweep.
    fn reserve_slot(&self, idle: &impl Fn(&V) -> bool) -> bool {
        let Some(cap) = self.options.max_keys else {
            // Relaxed: `tracked` is a count, not a guard for other memory.
            self.books.tracked.fetch_add(1, Ordering::Relaxed);
            return true;
        };
        for attempt in 0..2 {
            // Relaxed: the reservation is one RMW, so at most `cap` succeed
            // whatever the interleaving; nothing else is published with it.
            let taken = self.books.tracked.fetch_add(1, Ordering::Relaxed);
            if taken < cap {
                return true;
            }
            self.books.tracked.fetch_sub(1, Ordering::Relaxed);
            if attempt == 0 && !self.sweep_at_cap(cap, idle) {
                return false;
            }
        }
        false
    }

    /// At the cap: sweeps once per `cap / 8` refusals; true if it swept.
    #[cold]
    fn sweep_at_cap(&self, cap: usize, idle: &impl Fn(&V) -> bool) -> bool {
        let every = (cap / 8).max(1);
        // Relaxed: a heuristic counter; a lost race only shifts a sweep.
        let refused = self.books.since_sweep.fetch_add(1, Ordering::Relaxed);
        if refused % every != 0 {
            return false;
        }
        self.sweep(idle) > 0
    }

    #[inline]
    fn maybe_auto_sweep(&self, idle: &impl Fn(&V) -> bool) {
        // Relaxed: heuristic counters; the claim below is a single RMW, so
        // exactly one thread runs each due sweep.
        let since = self.books.since_sweep.fetch_add(1, Ordering::Relaxed) + 1;
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
            self.auto_sweep(idle);
        }
    }

    #[cold]
    fn auto_sweep(&self, idle: &impl Fn(&V) -> bool) {
        self.sweep(idle);
        let left = self.books.tracked.load(Ordering::Relaxed);
        // Relaxed: only sets when the next sweep is due.
        self.books
            .sweep_due
            .store(left.max(self.options.min_sweep_interval), Ordering::Relaxed);
    }

    /// Drops every state for which `idle` holds; returns how many.
    ///
    /// Each shard is judged under its write lock, so no update runs on a
    /// state between the test and its removal.
    pub(crate) fn sweep(&self, idle: impl Fn(&V) -> bool) -> usize {
        let removed = self.map.retain(|state| !idle(state));
        // Relaxed: a count; the map's locks already ordered the removals.
        self.books.tracked.fetch_sub(removed, Ordering::Relaxed);
        removed
    }

    /// Keys tracked now.
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}
