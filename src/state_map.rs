//! [`StateMap`]: the keyed store's map from keys to per-key states, with
//! lookups that write no shared memory.
//!
//! The keys are split over shards by hash. Each shard holds its current
//! [`Table`] behind a lock that only writers take: inserting a key, sweeping
//! idle states, moving the live states to a new table when the table fills
//! or empties. Each thread keeps, per shard, a reference to the table it
//! last saw (a per-thread cache, so a lookup needs no reference-count
//! update; found through `PerThread`'s memo), and looks keys up in it with
//! plain loads:
//!
//! | lookup finds                          | what the caller does                    |
//! |---------------------------------------|-----------------------------------------|
//! | the key, state live                   | updates the state (its own CAS or lock) |
//! | the key, state retired                | looks again under the shard lock        |
//! | no key (or no table cached yet)       | looks again under the shard lock        |
//!
//! Under the lock the caller refreshes its cached table and finds the key's
//! live state, revives a retired one, or inserts a new one. Writers retire a
//! state (see [`Retire`]) before they drop or move it, and no update applies
//! to a retired state, so a thread still holding an old table can never
//! update a state that has been replaced: it only ever sends the caller to
//! the lock. An old table is freed when the last thread caching it comes
//! back to that shard, or the map is dropped, so memory holds at most one
//! superseded table per thread and shard. A thread that exits keeps its
//! caches until a later thread takes over its slot (`thread_local` hands an
//! exited thread's slot to the next new thread) and looks the shard up, so
//! "per thread" counts the most threads that were ever alive at once.
//!
//! Under `--cfg tollgate_loom` there is no per-thread cache (`loom` runs its
//! threads on one OS thread): a lookup takes the shard lock just long enough
//! to clone the current table's `Arc`, then uses that table after releasing
//! the lock, so a rebuild or sweep can still run between the two, as with a
//! stale cache.

use crossbeam_utils::CachePadded;

use crate::key::Key;
use crate::map_hasher::MapHasher;
#[cfg(not(tollgate_loom))]
use crate::per_thread::PerThread;
use crate::placement::Placement;
use crate::retire::Retire;
use crate::state_table::{Table, off_path_count};
use crate::sync::{Arc, AtomicBool, AtomicUsize, Mutex, Ordering, fence, lock};
use crate::table_fill::TableFill;

/// Fewest slots in a table.
#[cfg(not(tollgate_loom))]
const MIN_CAPACITY: usize = 16;

/// Under loom, two slots: the second key of a shard already moves the table,
/// so small models cover rebuilds racing lookups.
#[cfg(tollgate_loom)]
const MIN_CAPACITY: usize = 2;

/// Shards when none are asked for: four per CPU (one under loom, whose
/// models need no spreading and stay smaller without it).
fn default_shards() -> usize {
    if cfg!(tollgate_loom) {
        return 1;
    }
    4 * std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// A shard's lock around its current table and counts.
type ShardLock<K, V> = CachePadded<Mutex<Shard<K, V>>>;

/// The table of keys `K`: their stored forms and states.
type KeyTable<K, V> = Table<<K as Key>::Stored, V>;

/// One thread's table per shard (`None` until it first takes the lock).
/// The `RefCell` keeps a call made from inside a lookup (a user's key
/// comparison or rule calling the same limiter) from dropping a table the
/// lookup still reads (`tests/reentrant_calls.rs`). Padded: `ThreadLocal`
/// keeps threads' values side by side, and every lookup writes the
/// `RefCell`'s borrow count, so unpadded neighbours would bounce one cache
/// line between cores.
#[cfg(not(tollgate_loom))]
type TableCache<K, V> = CachePadded<std::cell::RefCell<Box<[Option<Arc<KeyTable<K, V>>>]>>>;

/// One shard's current table and its counts, under the shard lock.
struct Shard<K: Key, V> {
    table: Arc<KeyTable<K, V>>,
    /// Slots taken: live entries plus retired ones.
    taken: usize,
    /// Entries whose state is live.
    live: usize,
    /// Keys started here (inserted or revived) since the map was made.
    started: usize,
    /// Taken slots of the table holding a key off the straight-line lookup
    /// (see [`Placement`]).
    off_path: usize,
}

/// How [`StateMap::read_or_insert`] found its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// The key had a live state.
    Live,
    /// The key was started; `in_shard` keys have been started in its shard
    /// so far, this one included.
    Started {
        /// Keys started in the shard so far.
        in_shard: usize,
    },
}

/// What a lookup without a lock learned about its key
/// ([`StateMap::read_or_absent`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Seen<R> {
    /// The key's state was live; what the caller's function made of it.
    Live(R),
    /// The key had no live state at some moment during the call.
    Absent,
    /// This thread's table may be out of date: look again under the lock.
    Unsure,
}

/// A key's hash, and the same through [`StateMap::shards_by`] (what picks
/// its shard), made once per call.
#[derive(Clone, Copy, Debug)]
struct KeyHash {
    /// The hash as the store's hasher gave it.
    hash: u64,
    /// `hash` through `shards_by`: folded in a robust store, else the same.
    spread: u64,
}

/// Per-key states of type `V` under keys `K`.
pub(crate) struct StateMap<K: Key, V: Send + Sync> {
    /// The store's own seeds (see [`MapHasher`]).
    hasher: MapHasher,
    /// What a key's hash goes through to pick its shard: folded for
    /// a robust hash, whose bits as hashed split keys that differ only in
    /// their last bytes unevenly under some seeds (see `docs/design.md`).
    shards_by: Placement,
    shards: Box<[ShardLock<K, V>]>,
    /// How full a table may get before it moves.
    fill: TableFill,
    /// Set once some shard's keys crowded as hashed: from then on every new
    /// table folds (see [`Placement`]), and the switch moves the others,
    /// so that all lookups take one branch.
    folds: AtomicBool,
    /// The next shard whose table the switch to folding moves: one per
    /// insertion after the switch (see [`fold_after_insert`](Self::fold_after_insert)).
    /// The shard count when none is left, or the store never switched.
    fold_next: AtomicUsize,
    /// Each thread's tables, one slot per shard.
    #[cfg(not(tollgate_loom))]
    cached: PerThread<TableCache<K, V>>,
}

impl<K: Key, V: Retire + Send + Sync> StateMap<K, V> {
    /// A map with `shards` shards (rounded up to a power of two, 1 to 65536),
    /// or four per CPU when `None`, whose tables move as `fill` says, and
    /// all fold the hash when `robust_hash` (see [`Placement`]).
    pub(crate) fn new(shards: Option<usize>, fill: TableFill, robust_hash: bool) -> Self {
        Self::with_hasher(shards, fill, MapHasher::random(robust_hash))
    }

    /// [`new`](Self::new) with the seeds of `hasher`.
    fn with_hasher(shards: Option<usize>, fill: TableFill, hasher: MapHasher) -> Self {
        let count = shards
            .unwrap_or_else(default_shards)
            .clamp(1, 1 << 16)
            .next_power_of_two();
        let first = hasher.placement(false);
        StateMap {
            hasher,
            shards_by: first,
            shards: (0..count)
                .map(|_| {
                    CachePadded::new(Mutex::new(Shard {
                        table: Arc::new(Table::with_placement(MIN_CAPACITY, first)),
                        taken: 0,
                        live: 0,
                        started: 0,
                        off_path: 0,
                    }))
                })
                .collect(),
            fill: fill.for_shards(count),
            folds: AtomicBool::new(false),
            fold_next: AtomicUsize::new(count),
            #[cfg(not(tollgate_loom))]
            cached: PerThread::new(),
        }
    }

    #[inline]
    fn hash(&self, key: &K::Lookup) -> u64 {
        K::hash_with(key, &&self.hasher)
    }

    /// A stored key's hash: the same as its lookup form's.
    fn hash_stored(&self, key: &K::Stored) -> u64 {
        K::hash_stored(key, &&self.hasher)
    }

    /// `key`'s [`KeyHash`].
    #[inline]
    fn key_hash(&self, key: &K::Lookup) -> KeyHash {
        let hash = self.hash(key);
        KeyHash {
            hash,
            spread: self.shards_by.apply(hash),
        }
    }

    /// The shard for a key: bits above the seven the tags use; the table
    /// index uses the top bits. A store that folds from the start (a robust
    /// hash) takes them from the folded hash, as its tables place keys; any
    /// other store from the hash before any fold, so a lookup finds its
    /// table while the fold's multiply runs, and keys never change shards
    /// when the store switches to folding.
    #[inline]
    fn shard_of(&self, key: KeyHash) -> usize {
        // Truncation keeps the low bits, which the mask selects anyway.
        (key.spread >> 7) as usize & (self.shards.len() - 1)
    }

    /// The hash `table` places a key by. A table that places keys as the
    /// shard was picked (every table of a robust store) takes the spread
    /// hash as it is, so the fold is made once, before the shard, and not
    /// again after the table is loaded.
    #[inline(always)]
    fn placed(&self, table: &KeyTable<K, V>, KeyHash { hash, spread }: KeyHash) -> u64 {
        let placement = table.placement();
        // Tested first so that a store whose tables place keys as hashed
        // pays one test, as `Placement::apply` alone would.
        if !placement.folds() {
            hash
        } else if placement == self.shards_by {
            spread
        } else {
            placement.apply(hash)
        }
    }

    /// `key`'s state in `table`, compared by [`Key::matches`].
    #[inline(always)]
    fn find<'t>(&self, table: &'t KeyTable<K, V>, hash: KeyHash, key: &K::Lookup) -> Option<&'t V> {
        table.find_by(self.placed(table, hash), |stored| K::matches(stored, key))
    }

    /// Runs `f` on `key`'s state if this thread's table for its shard holds
    /// it; `None` when it does not, or `f` returns `None` (the state was
    /// retired). Either way the caller looks again with a locked method.
    #[inline]
    pub(crate) fn read<R>(&self, key: &K::Lookup, f: impl FnOnce(&V) -> Option<R>) -> Option<R> {
        let hash = self.key_hash(key);
        self.with_table(self.shard_of(hash), |table| {
            self.find(table, hash, key).and_then(f)
        })
    }

    /// As [`read`](Self::read), but also says when the key is absent, so a
    /// map where most lookups miss (the registry's assignments) answers
    /// them without the lock. `f` returns `None` for a retired state.
    ///
    /// A miss, or a retired state, in a table that is still its shard's
    /// current one means the key had no live state then: keys are started
    /// only in the current table. In a superseded table it means nothing,
    /// since the key may live on in the new one.
    #[inline]
    pub(crate) fn read_or_absent<R>(
        &self,
        key: &K::Lookup,
        f: impl FnOnce(&V) -> Option<R>,
    ) -> Seen<R> {
        let hash = self.key_hash(key);
        let seen = self.with_table(self.shard_of(hash), |table| {
            // A point where the model may run other threads, as a real
            // thread may between reading its cached table and using it:
            // without it, loom never moved the table between the two.
            #[cfg(tollgate_loom)]
            loom::thread::yield_now();
            if let Some(state) = self.find(table, hash, key) {
                if let Some(result) = f(state) {
                    return Some(Seen::Live(result));
                }
                // Acquire: pairs with the release fence a rebuild issues
                // after marking the table and before retiring its states,
                // so a state retired by the move shows the mark.
                fence(Ordering::Acquire);
            }
            // A key is started (or revived) only in its shard's current
            // table. If that was another table, this one was marked before
            // the key started, so a key started before this call began
            // shows the mark here.
            Some(if table.is_superseded() {
                Seen::Unsure
            } else {
                Seen::Absent
            })
        });
        seen.unwrap_or(Seen::Unsure)
    }

    /// Runs `f` on this thread's table for `shard`; `None` if it has none.
    #[cfg(not(tollgate_loom))]
    #[inline]
    fn with_table<R>(
        &self,
        shard: usize,
        f: impl FnOnce(&KeyTable<K, V>) -> Option<R>,
    ) -> Option<R> {
        let cached = self.cached.get_or(|| self.empty_cache());
        f(cached.try_borrow().ok()?[shard].as_deref()?)
    }

    /// Runs `f` on the shard's current table, read under its lock and used
    /// after it (see the module docs).
    #[cfg(tollgate_loom)]
    fn with_table<R>(
        &self,
        shard: usize,
        f: impl FnOnce(&KeyTable<K, V>) -> Option<R>,
    ) -> Option<R> {
        let table = Arc::clone(&lock(&self.shards[shard]).table);
        f(&table)
    }

    #[cfg(not(tollgate_loom))]
    fn empty_cache(&self) -> TableCache<K, V> {
        CachePadded::new(std::cell::RefCell::new(
            (0..self.shards.len()).map(|_| None).collect(),
        ))
    }

    /// Makes `table` this thread's table for `shard`.
    #[cfg(not(tollgate_loom))]
    fn remember(&self, shard: usize, table: &Arc<KeyTable<K, V>>) {
        let cached = self.cached.get_or(|| self.empty_cache());
        // Busy only if a lookup on this thread is still running: skip.
        if let Ok(mut cached) = cached.try_borrow_mut() {
            let slot = &mut cached[shard];
            if !slot.as_ref().is_some_and(|old| Arc::ptr_eq(old, table)) {
                *slot = Some(Arc::clone(table));
            }
        }
    }

    #[cfg(tollgate_loom)]
    fn remember(&self, _shard: usize, _table: &Arc<KeyTable<K, V>>) {}

    /// Drops this thread's table for `shard`, so a rebuild can own it.
    #[cfg(not(tollgate_loom))]
    fn forget(&self, shard: usize) {
        if let Some(cached) = self.cached.get()
            && let Ok(mut cached) = cached.try_borrow_mut()
        {
            cached[shard] = None;
        }
    }

    #[cfg(tollgate_loom)]
    fn forget(&self, _shard: usize) {}

    /// Runs `f` on `key`'s live state under its shard's lock; `None` if the
    /// key has none. No state is retired while the lock is held.
    pub(crate) fn read_locked<R>(&self, key: &K::Lookup, f: impl FnOnce(&V) -> R) -> Option<R> {
        let hash = self.key_hash(key);
        let index = self.shard_of(hash);
        let shard = lock(&self.shards[index]);
        self.remember(index, &shard.table);
        let state = self.find(&shard.table, hash, key)?;
        (!state.is_retired()).then(|| f(state))
    }

    /// Runs `f` on `key`'s live state under its shard's lock, starting the
    /// key with `make()` first if it has none; `f` learns which it was. The
    /// key's stored form is made only when it is new.
    pub(crate) fn read_or_insert<R>(
        &self,
        key: &K::Lookup,
        make: impl FnOnce() -> V,
        f: impl FnOnce(&V, Found) -> R,
    ) -> R {
        let hash = self.key_hash(key);
        let index = self.shard_of(hash);
        let mut guard = lock(&self.shards[index]);
        let shard = &mut *guard;
        if let Some(state) = self.find(&shard.table, hash, key) {
            self.remember(index, &shard.table);
            if !state.is_retired() {
                return f(state, Found::Live);
            }
            state.revive(make());
            shard.live += 1;
            return f(state, Found::start(&mut shard.started));
        }
        let mut switched = false;
        if self.fill.too_full(shard.taken + 1, shard.table.capacity()) {
            let capacity = self.capacity_for(shard.live + 1);
            switched = self.rebuild(index, shard, capacity, true);
        }
        self.remember(index, &shard.table);
        shard.taken += 1;
        shard.live += 1;
        let found = Found::start(&mut shard.started);
        // SAFETY: `shard` is borrowed from this shard's lock guard, and only
        // the lock holder puts into the shard's current table.
        #[allow(unsafe_code)]
        let (state, off_path) = unsafe {
            shard
                .table
                .put_placed(self.placed(&shard.table, hash), K::store(key), make())
        };
        if off_path {
            shard.off_path += 1;
            // Checked only when a key lands off the path: the
            // count changes only then.
            switched |= self.is_crowded(shard) && self.start_folding();
        }
        if switched || self.folds_pending() {
            let result = f(state, found);
            drop(guard);
            self.fold_after_insert(index, switched);
            return result;
        }
        // The common case returns `f`'s result in place: held in a local
        // across the branch above, it was stored and copied out again, and
        // a new key took about 5 ns longer.
        f(state, found)
    }

    /// Makes every table fold from now on; true if this call did.
    #[cold]
    fn start_folding(&self) -> bool {
        // Relaxed: the flag only steers how new tables place keys; each
        // table records its own placement, so a lookup never depends on it.
        !self.folds.swap(true, Ordering::Relaxed)
    }

    /// Switches the store to folding now, as crowded keys would, from the
    /// first shard: loom's two-slot tables never crowd, so its models call
    /// this instead.
    #[cfg(tollgate_loom)]
    pub(crate) fn switch_to_folding(&self) {
        if self.start_folding() {
            self.fold_after_insert(0, true);
        }
    }

    /// Whether the switch to folding still has shards to move.
    #[inline]
    fn folds_pending(&self) -> bool {
        // Relaxed: the cursor only picks which shard a caller moves; the
        // move itself checks the table's own placement under its lock.
        self.fold_next.load(Ordering::Relaxed) < self.shards.len()
    }

    /// Spreads the switch to folding over insertions, so that no call moves
    /// more than one shard for it: the call that switched moves its own
    /// shard (whose keys crowded) and starts the round over the shards, and
    /// each later insertion, in any shard, moves the next one. A sweep
    /// folds every shard it visits, so a store whose keys stop coming still
    /// gets there, and ends the round.
    #[cold]
    fn fold_after_insert(&self, index: usize, switched: bool) {
        if switched {
            self.fold_shard(index);
            // Relaxed: as in `folds_pending`.
            self.fold_next.store(0, Ordering::Relaxed);
            return;
        }
        // Relaxed: as in `folds_pending`. Racing callers each take their
        // own shard; the cursor passes the end by at most one per caller
        // in flight, and no caller moves it once it has.
        let next = self.fold_next.fetch_add(1, Ordering::Relaxed);
        if next < self.shards.len() {
            self.fold_shard(next);
        }
    }

    /// Moves the shard's keys to a table that folds, if the store folds and
    /// its table does not yet.
    fn fold_shard(&self, index: usize) {
        let mut shard = lock(&self.shards[index]);
        self.fold_if_behind(index, &mut shard);
    }

    /// [`fold_shard`](Self::fold_shard) for a shard whose lock the caller
    /// holds.
    fn fold_if_behind(&self, index: usize, shard: &mut Shard<K, V>) {
        if !shard.table.placement().folds() && self.placement().folds() {
            // The same size while the next key fits: this move only
            // changes where keys sit (sized as a growth, a table more than
            // half full would grow, and stay grown once keys stop coming).
            // Where the next key would grow it, the growth's own table, so
            // the shard keeps to the sizes growth gives it.
            let capacity = shard.table.capacity();
            let capacity = if self.fill.too_full(shard.live + 1, capacity) {
                self.capacity_for(shard.live + 1)
            } else {
                capacity
            };
            self.rebuild(index, shard, capacity, false);
        }
    }

    /// Retires and drops every live state for which `idle` holds; returns
    /// how many. Each shard is swept under its lock.
    pub(crate) fn sweep(&self, idle: impl Fn(&V) -> bool) -> usize {
        // A store that already folds is folded throughout once this sweep
        // has visited every shard, so the switch's round can end.
        let folds_throughout = self.placement().folds();
        let mut removed = 0;
        for (index, cell) in self.shards.iter().enumerate() {
            let mut shard = lock(cell);
            let retired = shard
                .table
                .entries()
                .filter(|(_, state)| state.retire_if(&idle))
                .count();
            removed += retired;
            self.retired(index, &mut shard, retired);
            self.fold_if_behind(index, &mut shard);
        }
        if folds_throughout {
            // Relaxed: as in `folds_pending`. A switch whose cursor reset
            // lands after this restarts the round, which only costs locks.
            self.fold_next
                .fetch_max(self.shards.len(), Ordering::Relaxed);
        }
        removed
    }

    /// Retires `key`'s live state, whatever it holds; true if there was one.
    pub(crate) fn remove(&self, key: &K::Lookup) -> bool {
        let hash = self.key_hash(key);
        let index = self.shard_of(hash);
        let mut shard = lock(&self.shards[index]);
        let removed = self
            .find(&shard.table, hash, key)
            .is_some_and(|state| state.retire_if(|_| true));
        self.retired(index, &mut shard, usize::from(removed));
        removed
    }

    /// Whether the shard's table places keys as hashed and leaves too many
    /// off the straight-line lookup (see [`Placement`]).
    fn is_crowded(&self, shard: &Shard<K, V>) -> bool {
        !shard.table.placement().folds()
            && Placement::is_crowded(
                shard.taken,
                shard.off_path,
                self.fill.is_compact(shard.table.capacity()),
            )
    }

    /// Counts `count` states just retired in the shard, and gives the space
    /// back once most of its slots hold retired states (so each move is
    /// paid for by the removals since the last).
    fn retired(&self, index: usize, shard: &mut Shard<K, V>, count: usize) {
        shard.live -= count;
        if shard.taken > MIN_CAPACITY && shard.live * 2 < shard.taken {
            let capacity = self.capacity_for(shard.live);
            // Only an insertion switches the store to folding tables: this
            // caller holds the lock it would have to give up first.
            self.rebuild(index, shard, capacity, false);
        }
    }

    /// The slots of a table a move builds for `keys` keys (filled to at
    /// most half), never fewer than the smallest table's.
    fn capacity_for(&self, keys: usize) -> usize {
        self.fill.capacity_for(keys).max(MIN_CAPACITY)
    }

    /// Moves the shard's live states to a new table of `capacity` slots,
    /// which the caller sized to take them all and leave a slot free
    /// (growth and shrinking by [`capacity_for`](Self::capacity_for)). With
    /// `may_switch`, a store whose tables do not fold yet checks whether
    /// these keys need it, and if so switches to folding: true if this call
    /// switched it.
    ///
    /// If no other thread holds the old table, its entries are moved as
    /// they are. Otherwise each state is retired as it is taken and its key
    /// cloned, so a thread still using the old table looks again under the
    /// lock this caller holds.
    fn rebuild(
        &self,
        index: usize,
        shard: &mut Shard<K, V>,
        capacity: usize,
        may_switch: bool,
    ) -> bool {
        debug_assert!(
            capacity > shard.live,
            "a move must leave no live state behind and a slot free"
        );
        self.forget(index);
        // The caller's code (the key's `Hash` and `Clone`) runs first, before
        // any state is taken or retired: should it panic, the shard is left
        // as it was (its `Drop` runs last, below). Under the lock no state is
        // retired meanwhile, so both passes see the same live entries.
        let mut live = 0;
        // Retired entries of an owned table, dropped once the shard is whole
        // again: dropping runs the key's `Drop`, which may panic too.
        let mut retired = Vec::new();
        let placement = self.placement();
        // Sized up front: collected from a filter, it would start small and
        // be copied as it grew.
        let mut hashes = Vec::with_capacity(shard.live);
        let (table, off_path) = match Arc::get_mut(&mut shard.table) {
            Some(owned) => {
                hashes.extend(live_entries(owned).map(|(key, _)| self.hash_stored(key)));
                let moved = owned.take_entries().filter_map(|entry| {
                    if entry.1.is_retired() {
                        retired.push(entry);
                        None
                    } else {
                        Some(entry)
                    }
                });
                Table::with_entries(
                    capacity,
                    placement,
                    moved
                        .zip(hashes.iter().copied())
                        .map(|((key, state), hash)| {
                            live += 1;
                            (hash, key, state)
                        }),
                )
            }
            None => {
                let mut keys: Vec<K::Stored> = Vec::with_capacity(shard.live);
                for (key, _) in live_entries(&shard.table) {
                    hashes.push(self.hash_stored(key));
                    keys.push(key.clone());
                }
                shard.table.supersede();
                // Release: a reader that finds a state retired below, then
                // issues an acquire fence, sees the table marked, so it does
                // not take the retired state for an absent key
                // (`read_or_absent`).
                fence(Ordering::Release);
                let moved = live_entries(&shard.table)
                    .zip(hashes.iter().copied().zip(keys))
                    .filter_map(|((_, state), (hash, key))| {
                        let state = state.retire_and_take()?;
                        live += 1;
                        Some((hash, key, state))
                    });
                Table::with_entries(capacity, placement, moved)
            }
        };
        shard.table = Arc::new(table);
        shard.taken = live;
        shard.live = live;
        shard.off_path = off_path;
        drop(retired);
        may_switch
            && !placement.folds()
            && self.folding_pays(capacity, off_path, &hashes)
            && self.start_folding()
    }

    /// How new tables place keys: folded once the store folds.
    fn placement(&self) -> Placement {
        // Relaxed: see `start_folding`.
        self.hasher.placement(self.folds.load(Ordering::Relaxed))
    }

    /// Whether keys hashing to `hashes`, which a move just placed as
    /// hashed into a table of `capacity` slots with `off_path` of them off
    /// the straight-line lookup, would land clearly better folded (see
    /// [`Placement`]). Counts the folded placement only past a share a
    /// random function rarely leaves.
    #[inline]
    fn folding_pays(&self, capacity: usize, off_path: usize, hashes: &[u64]) -> bool {
        let compact = self.fill.is_compact(capacity);
        Placement::worth_checking(off_path, hashes.len(), compact) && {
            let folded = self.hasher.folded();
            let off_path_folded =
                off_path_count(capacity, hashes.iter().map(|&hash| folded.apply(hash)));
            Placement::should_fold(off_path, off_path_folded)
        }
    }

    /// Keys with a live state now (takes every shard's lock in turn).
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|cell| lock(cell).live).sum()
    }

    /// Shards the keys are split over.
    pub(crate) fn shard_count(&self) -> usize {
        self.shards.len()
    }

    /// Whether keys are hashed with the second fold.
    #[cfg(test)]
    pub(crate) fn hashes_robustly(&self) -> bool {
        self.hasher.always_folds()
    }
}

/// The entries of `table` whose state is live.
fn live_entries<K, V: Retire>(table: &Table<K, V>) -> impl Iterator<Item = &(K, V)> {
    table.entries().filter(|(_, state)| !state.is_retired())
}

impl Found {
    /// Counts one more key in a shard's `started` count.
    fn start(started: &mut usize) -> Found {
        *started = started.wrapping_add(1);
        Found::Started { in_shard: *started }
    }
}

#[cfg(all(test, not(tollgate_loom)))]
mod placement_survey;

#[cfg(all(test, not(tollgate_loom)))]
mod tests;
