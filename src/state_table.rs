//! [`Table`]: one shard's per-key states at a fixed capacity, found without
//! a lock.
//!
//! Open addressing over groups of eight slots. Each slot has a one-byte tag
//! and an entry; a group's eight tags share one `u64` word (layout in
//! [`tag_group`]), and the word also publishes the entries:
//!
//! | tag        | meaning                                                        |
//! |------------|----------------------------------------------------------------|
//! | `0`        | empty: no entry                                                |
//! | `1xxxxxxx` | taken: the entry is written, its key hashes to low bits `xxxxxxx` |
//!
//! A key goes into the first group, from its home group on, that has an
//! empty slot, so a lookup that finds an empty slot in a group without the
//! key stops there. An entry is written once, under the shard's lock, into
//! a slot whose tag is still empty; then its group's word is stored with
//! release ordering. A reader loads a word with acquire ordering and reads
//! only entries whose tags it saw taken, so it sees each such entry whole.
//! Entries are never cleared or replaced while the table is shared, so a
//! reader holding the table can borrow any entry it finds. A key leaves by
//! having its state retired ([`Retire`](crate::Retire)); its slot stays
//! taken until the shard moves its live entries to a new table.
//!
//! The tag is also the only record of which entries are written: an entry
//! is uninitialised memory until its tag is taken, so a `u64` key with a
//! `u64` state takes 16 bytes, not the 24 an `Option` around it would.
//!
//! This is one of the crate's two uses of `unsafe` (the other is
//! each thread's memo in `src/per_thread.rs`): a `OnceLock` per entry did the
//! same safely, but its publication costs two locked instructions per new
//! key where a release store is a plain store on x86-64, and insertions took
//! about half as long again with it (`docs/benchmarks.md`, levers). The tag
//! already had to be written, so it carries the publication.

#[cfg(any(test, tollgate_loom))]
use std::borrow::Borrow;
use std::mem::MaybeUninit;

use crate::placement::Placement;
use crate::sync::{AtomicBool, AtomicU64, Ordering, UnsafeCell};
use crate::tag_group::{self, GROUP};

/// The first of `groups` groups a key hashing to `hash` may sit in.
#[inline]
fn home_of(hash: u64, groups: usize) -> usize {
    // Below `groups`, so it fits a usize.
    ((u128::from(hash) * groups as u128) >> 64) as usize
}

/// A slot's entry: initialised exactly when its tag is taken (module docs).
type Entry<K, V> = UnsafeCell<MaybeUninit<(K, V)>>;

/// A group's eight entries, starting on a cache line, so an entry whose size
/// divides 64 bytes (16 for a `u64` key, 32 for a `String` key, with this
/// crate's states) never straddles two lines: a lookup touches one line, and
/// two threads updating nearby states share fewer. Other sizes (a 16-byte
/// custom key makes 24) leave some entries across a line boundary. Free for
/// this crate's states, which hold a `u64`: an entry's size is then a
/// multiple of 8 bytes and a group's of 64. (Entries under 8 bytes, possible
/// only with a custom state, pad their group.)
#[repr(align(64))]
struct EntryGroup<K, V>([Entry<K, V>; GROUP]);

/// An entry not written yet (or moved out): nothing to drop.
fn unwritten<K, V>() -> Entry<K, V> {
    UnsafeCell::new(MaybeUninit::uninit())
}

impl<K, V> EntryGroup<K, V> {
    /// A group of eight unwritten entries.
    fn empty() -> Self {
        EntryGroup(std::array::from_fn(|_| unwritten()))
    }
}

/// A fixed-capacity table of `(key, state)` entries.
pub struct Table<K, V> {
    /// Each group's eight tags (layout in the module docs).
    groups: Box<[AtomicU64]>,
    /// Each group's entries, written once under the shard's lock.
    entries: Box<[EntryGroup<K, V>]>,
    /// The slots asked for: the fill rules count against this, and the
    /// groups round it up, so a table filled to it still has an empty slot.
    capacity: usize,
    /// Set once another table has replaced this one as its shard's current
    /// table: from then on, keys started in the shard go into the new one.
    superseded: AtomicBool,
    /// How the table places a key by its hash.
    placement: Placement,
}

// SAFETY: threads sharing a table borrow keys and states from it (so both
// must be `Sync`) and find entries another thread moved in, and drop them
// with the table (so both must be `Send`). An entry is written only by
// `put_placed`, whose contract leaves one writer per table and a slot no reader
// reads until the release store of its group's word, after the write; it
// is never written again while shared.
#[allow(unsafe_code)]
unsafe impl<K: Send + Sync, V: Send + Sync> Sync for Table<K, V> {}

/// Groups for `capacity` slots, with at least one slot to spare.
fn groups_for(capacity: usize) -> usize {
    capacity / GROUP + 1
}

/// The group after `group` of `groups`, wrapping.
#[inline]
fn next_group(group: usize, groups: usize) -> usize {
    if group + 1 == groups { 0 } else { group + 1 }
}

/// How many of the keys placed by `hashes` (already through the table's
/// [`Placement`]), in this order, into an empty table of `capacity` slots
/// would be off the straight-line lookup (see [`FreeSlot`]): what
/// [`with_entries`](Table::with_entries) would leave, without building it.
pub(crate) fn off_path_count(capacity: usize, hashes: impl IntoIterator<Item = u64>) -> usize {
    let mut words = vec![0u64; groups_for(capacity.max(1))];
    hashes
        .into_iter()
        .take(capacity.max(1))
        .filter(|&hash| take_free_slot(&mut words, hash).off_path)
        .count()
}

/// Takes the [`FreeSlot`] for `hash` in the tag words of a table being
/// built (not shared yet), writing the key's tag into it.
#[inline]
fn take_free_slot(words: &mut [u64], hash: u64) -> FreeSlot {
    let free = free_slot(hash, words.len(), |group| words[group]);
    words[free.group] = tag_group::with_tag(free.word, free.slot, tag_group::tag_of(hash));
    free
}

/// Where a key hashing to `hash` goes: the first group, from its home on,
/// with an empty slot (what lets `find_by` stop at such a group).
struct FreeSlot {
    group: usize,
    /// The slot in the group.
    slot: usize,
    /// The group's word.
    word: u64,
    /// Whether a lookup of the key cannot stop at its home group's first
    /// candidate: the group is not its home group, or the home group
    /// already holds a key with the same tag, in an earlier slot.
    off_path: bool,
}

/// The [`FreeSlot`] for `hash` among `groups` groups; `word_of` reads a
/// group's word, and some group must have an empty slot.
#[inline]
fn free_slot(hash: u64, groups: usize, word_of: impl Fn(usize) -> u64) -> FreeSlot {
    let mut group = home_of(hash, groups);
    let mut word = word_of(group);
    let mut off_path = tag_group::candidates(word, tag_group::tag_of(hash)) != 0;
    while tag_group::empties(word) == 0 {
        group = next_group(group, groups);
        word = word_of(group);
        off_path = true;
    }
    FreeSlot {
        group,
        slot: tag_group::first_slot(tag_group::empties(word)),
        word,
        off_path,
    }
}

impl<K, V> Table<K, V> {
    /// An empty table of `capacity` slots (at least one), placing keys by
    /// their hash as it is.
    #[cfg(any(test, tollgate_loom))]
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_placement(capacity, Placement::AS_HASHED)
    }

    /// An empty table of `capacity` slots (at least one), placing keys as
    /// `placement` says.
    pub(crate) fn with_placement(capacity: usize, placement: Placement) -> Self {
        let capacity = capacity.max(1);
        let groups = groups_for(capacity);
        Table {
            groups: (0..groups).map(|_| AtomicU64::new(0)).collect(),
            entries: (0..groups).map(|_| EntryGroup::empty()).collect(),
            capacity,
            superseded: AtomicBool::new(false),
            placement,
        }
    }

    /// A table of `capacity` slots placing keys as `placement` says and
    /// holding `entries` (hash, key, state), built before anyone can see
    /// it, so its entries need no publication: whoever shares the table
    /// publishes them with it. The caller passes at most `capacity` entries;
    /// any beyond are dropped. Also returns how many entries are off the
    /// straight-line lookup (see [`FreeSlot`]).
    pub(crate) fn with_entries(
        capacity: usize,
        placement: Placement,
        entries: impl IntoIterator<Item = (u64, K, V)>,
    ) -> (Self, usize) {
        let capacity = capacity.max(1);
        let groups = groups_for(capacity);
        let mut words = vec![0u64; groups];
        // Built in place: each entry goes straight into its group, a fresh
        // cell replacing an unwritten one (nothing to drop), and no group
        // is copied afterwards.
        let mut slots: Box<[EntryGroup<K, V>]> = (0..groups).map(|_| EntryGroup::empty()).collect();
        let mut entries = entries.into_iter();
        let mut off_path = 0;
        for (hash, key, state) in entries.by_ref().take(capacity) {
            let free = take_free_slot(&mut words, placement.apply(hash));
            off_path += usize::from(free.off_path);
            slots[free.group].0[free.slot] = UnsafeCell::new(MaybeUninit::new((key, state)));
        }
        debug_assert!(entries.next().is_none(), "more entries than slots");
        let table = Table {
            groups: words.into_iter().map(AtomicU64::new).collect(),
            entries: slots,
            capacity,
            superseded: AtomicBool::new(false),
            placement,
        };
        (table, off_path)
    }

    /// How the table places keys.
    pub(crate) fn placement(&self) -> Placement {
        self.placement
    }

    /// Slots in the table, as the fill rules count them.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Marks the table replaced; called under the shard's lock before the
    /// new table takes its place.
    pub(crate) fn supersede(&self) {
        // Relaxed: readers that must see the mark are ordered after this
        // store by the shard lock's release, by their own call starting
        // later, or by the release fence the caller issues before it
        // retires any state (`StateMap::rebuild`).
        self.superseded.store(true, Ordering::Relaxed);
    }

    /// Whether another table has replaced this one (see
    /// [`supersede`](Self::supersede) for what orders the mark).
    #[inline]
    pub(crate) fn is_superseded(&self) -> bool {
        // Relaxed: the caller orders this load where it needs to (an
        // acquire fence after reading a retired state).
        self.superseded.load(Ordering::Relaxed)
    }

    /// The state for `key`, if an entry visible to this thread holds it.
    #[cfg(any(test, tollgate_loom))]
    pub fn find<Q>(&self, hash: u64, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        self.find_by(self.placement.apply(hash), |stored| stored.borrow() == key)
    }

    /// The state of the first entry visible to this thread whose key hashes
    /// to `hash` and satisfies `matches`; `hash` has been through the
    /// table's [`placement`](Self::placement) (the caller folds it, once,
    /// where the table folds).
    ///
    /// Most keys sit in their home group and are the only entry there with
    /// their tag, so that case is tried first, straight-line, as is a key
    /// absent from a home group with room; the full probe (more candidates,
    /// later groups) is out of line.
    // Always inlined: left to the compiler it stayed a call once two
    // limiters (or a limiter and a registry) shared a key and state type,
    // which put 19-23 instructions and a call on every hit
    // (docs/benchmarks/levers.md).
    #[inline(always)]
    pub fn find_by(&self, hash: u64, matches: impl Fn(&K) -> bool) -> Option<&V> {
        let home = home_of(hash, self.groups.len());
        // Acquire: pairs with the release store in `put_placed`, so every entry
        // whose tag this word shows taken is visible here.
        let word = self.groups[home].load(Ordering::Acquire);
        let candidates = tag_group::candidates(word, tag_group::tag_of(hash));
        if candidates != 0 {
            let (stored, state) = self.published(home, tag_group::first_slot(candidates));
            if matches(stored) {
                return Some(state);
            }
        } else if tag_group::empties(word) != 0 {
            // No candidate, and an empty slot ends the probe here: the key
            // is absent, the common case of a first request.
            return None;
        }
        self.probe(hash, matches)
    }

    /// [`find_by`](Self::find_by)'s full probe, from the home group on;
    /// `hash` has been through the table's placement.
    #[cold]
    #[inline(never)]
    fn probe(&self, hash: u64, matches: impl Fn(&K) -> bool) -> Option<&V> {
        let tag = tag_group::tag_of(hash);
        let groups = self.groups.len();
        let mut group = home_of(hash, groups);
        for _ in 0..groups {
            // Acquire: as in `find_by`.
            let word = self.groups[group].load(Ordering::Acquire);
            let mut candidates = tag_group::candidates(word, tag);
            while candidates != 0 {
                let (stored, state) = self.published(group, tag_group::first_slot(candidates));
                if matches(stored) {
                    return Some(state);
                }
                candidates = tag_group::without_first(candidates);
            }
            if tag_group::empties(word) != 0 {
                return None;
            }
            group = next_group(group, groups);
        }
        None
    }

    /// The entry in `slot` of `group`, whose tag a word loaded with acquire
    /// ordering showed taken ([`tag_group::candidates`] flags only taken
    /// slots), or which this thread has just written in `put_placed`.
    #[inline]
    fn published(&self, group: usize, slot: usize) -> &(K, V) {
        self.entries[group].0[slot].with(|entry| {
            // SAFETY: the caller saw the slot's tag taken in a word loaded
            // with acquire ordering, which orders this read after the
            // entry's write: by `put_placed`, which stores the word with release
            // ordering after it, or by `with_entries`, before the table was
            // shared; or the caller is that `put_placed`, after its own write. No
            // write follows while it is shared, so a shared borrow for as
            // long as `self` lives is sound. A taken tag also means the
            // entry is initialised (module docs).
            #[allow(unsafe_code)]
            unsafe {
                (*entry).assume_init_ref()
            }
        })
    }

    /// [`put_placed`](Self::put_placed) of a hash before the table's
    /// placement (as [`find`](Self::find) takes it), returning only the
    /// state.
    ///
    /// # Safety
    ///
    /// As for [`put_placed`](Self::put_placed).
    #[cfg(any(test, tollgate_loom))]
    #[allow(unsafe_code)]
    pub unsafe fn put(&self, hash: u64, key: K, state: V) -> &V {
        // SAFETY: the caller keeps `put_placed`'s contract, which is this one.
        unsafe { self.put_placed(self.placement.apply(hash), key, state) }.0
    }

    /// Puts `key` in the first empty slot of its probe and returns its
    /// state, and whether it is off the straight-line lookup (see
    /// [`FreeSlot`]). For a key not in the table, with fewer than
    /// `capacity` taken; `hash` has been through the table's
    /// [`placement`](Self::placement), as for [`find_by`](Self::find_by).
    ///
    /// # Safety
    ///
    /// No other put on this table may run at once: callers hold the lock of
    /// the shard whose table this is. (Readers need no lock: they never read
    /// an entry whose tag is empty, and the tag is published after the write.)
    #[allow(unsafe_code)]
    pub(crate) unsafe fn put_placed(&self, hash: u64, key: K, state: V) -> (&V, bool) {
        let free = free_slot(hash, self.groups.len(), |group| {
            // Relaxed: the caller is the only writer of tags, so it sees
            // every tag exactly.
            self.groups[group].load(Ordering::Relaxed)
        });
        self.entries[free.group].0[free.slot].with_mut(|entry| {
            // SAFETY: the slot's tag is empty, so no reader reads this entry
            // (see `find_by` and `entries`), and by this function's contract no
            // other writer runs. An empty tag also means the entry holds
            // nothing to drop: a tag is set only together with its entry
            // (here and in `with_entries`). The write goes through the raw
            // pointer, not through a `&mut` to the entry, so the borrow
            // returned below derives from the cell as every reader's does:
            // a `&mut`-derived borrow would be invalidated, under Stacked
            // Borrows, by the first CAS another thread makes on the state
            // through its own borrow.
            unsafe { entry.cast::<(K, V)>().write((key, state)) }
        });
        // Release: publishes the entry written above to readers that load
        // this word with acquire ordering (`find_by`, `entries`).
        self.groups[free.group].store(
            tag_group::with_tag(free.word, free.slot, tag_group::tag_of(hash)),
            Ordering::Release,
        );
        (&self.published(free.group, free.slot).1, free.off_path)
    }

    /// Entries off the straight-line lookup (see [`FreeSlot`]), their keys
    /// hashed by `hash_of`: outside their home group, or behind an earlier
    /// entry with the same tag in it.
    #[cfg(test)]
    pub(crate) fn off_path_now(&self, hash_of: impl Fn(&K) -> u64) -> usize {
        let groups = self.groups.len();
        (0..groups)
            .map(|group| {
                // Acquire: as in `find_by`.
                let word = self.groups[group].load(Ordering::Acquire);
                tag_group::taken_slots(word)
                    .filter(|&slot| {
                        let hash = self
                            .placement
                            .apply(hash_of(&self.published(group, slot).0));
                        let tag = tag_group::tag_at(word, slot);
                        home_of(hash, groups) != group
                            || (0..slot).any(|earlier| tag_group::tag_at(word, earlier) == tag)
                    })
                    .count()
            })
            .sum()
    }

    /// Every entry, in slot order: each group's word loaded once.
    pub(crate) fn entries(&self) -> impl Iterator<Item = &(K, V)> {
        self.groups
            .iter()
            .enumerate()
            .flat_map(move |(group, word)| {
                // Acquire: as in `find_by`.
                let word = word.load(Ordering::Acquire);
                tag_group::taken_slots(word).map(move |slot| self.published(group, slot))
            })
    }

    /// Takes every entry, by value, in slot order, leaving no slots.
    pub(crate) fn take_entries(&mut self) -> TakenEntries<K, V> {
        TakenEntries {
            words: std::mem::take(&mut self.groups).into_vec().into_iter(),
            entries: std::mem::take(&mut self.entries),
            next_group: 0,
            taken: tag_group::taken_slots(0),
        }
    }
}

impl<K, V> Drop for Table<K, V> {
    fn drop(&mut self) {
        // Taking the entries drops them.
        drop(self.take_entries());
    }
}

/// A table's entries, moved out of it in slot order; those not taken by
/// the time it is dropped are dropped with it.
///
/// Each entry is moved out of its group where it lies. Moving whole groups
/// out of the array first copied every group twice on each move of a
/// growing table (`docs/benchmarks.md`, levers).
pub(crate) struct TakenEntries<K, V> {
    /// The tags of the groups not yet reached.
    words: std::vec::IntoIter<AtomicU64>,
    /// Every group's entries; those already yielded are unwritten again.
    entries: Box<[EntryGroup<K, V>]>,
    /// The group after the one `taken` walks.
    next_group: usize,
    /// The taken slots of group `next_group - 1` not yet yielded.
    taken: tag_group::TakenSlots,
}

impl<K, V> Iterator for TakenEntries<K, V> {
    type Item = (K, V);

    fn next(&mut self) -> Option<(K, V)> {
        loop {
            if let Some(slot) = self.taken.next() {
                let group = &mut self.entries[self.next_group - 1];
                let entry = std::mem::replace(&mut group.0[slot], unwritten());
                // SAFETY: a taken tag means the entry was written (module
                // docs), and each entry is yielded once: its slot leaves
                // `taken` as it is moved out, and both iterators own what
                // they yield, so the table no longer holds it.
                #[allow(unsafe_code)]
                return Some(unsafe { entry.into_inner().assume_init() });
            }
            self.taken = tag_group::taken_slots(self.words.next()?.into_inner());
            self.next_group += 1;
        }
    }
}

impl<K, V> Drop for TakenEntries<K, V> {
    fn drop(&mut self) {
        // Entries without drop glue need no walk: freeing the array is all.
        if std::mem::needs_drop::<(K, V)>() {
            self.for_each(drop);
        }
    }
}

#[cfg(all(test, not(tollgate_loom)))]
// SAFETY (every `put` below): one thread, so one writer.
#[allow(unsafe_code)]
mod tests {
    use super::*;

    /// The inserting thread keeps updating the state `put` returned while
    /// readers update it through the borrows `find` gives them. Plain
    /// `cargo test` cannot tell a wrong derivation apart; under Miri this
    /// fails if `put` returns a borrow derived from a `&mut` to the entry
    /// (a reader's write then invalidates it under Stacked Borrows).
    #[test]
    fn the_state_put_returns_stays_usable_after_a_reader_writes_it() {
        let table: Table<u64, AtomicU64> = Table::with_capacity(8);
        let inserted = unsafe { table.put(7, 1, AtomicU64::new(0)) };
        let found = table.find(7, &1).expect("the key just put");
        // Relaxed: one thread; only the values matter.
        found.store(5, Ordering::Relaxed);
        assert_eq!(inserted.fetch_add(1, Ordering::Relaxed), 5);
        assert_eq!(found.load(Ordering::Relaxed), 6);
    }

    #[test]
    fn finds_what_it_put_even_when_every_key_shares_a_home() {
        let table: Table<u64, u64> = Table::with_capacity(8);
        for key in 0..7 {
            // One hash for all: every key probes from the same slot.
            assert_eq!(unsafe { *table.put(42, key, key * 10) }, key * 10);
        }
        for key in 0..7 {
            assert_eq!(table.find(42, &key), Some(&(key * 10)));
        }
        assert_eq!(table.find(42, &7), None);
        assert_eq!(table.entries().count(), 7);
    }

    #[test]
    fn keys_sharing_a_home_spill_over_groups_and_wrap_around() {
        // 24 slots ask for 4 groups; a hash whose home is the last group.
        let table: Table<u64, u64> = Table::with_capacity(24);
        let hash = u64::MAX;
        assert_eq!(home_of(hash, table.groups.len()), table.groups.len() - 1);
        for key in 0..24 {
            assert_eq!(unsafe { *table.put(hash, key, key + 1) }, key + 1);
        }
        for key in 0..24 {
            assert_eq!(table.find(hash, &key), Some(&(key + 1)));
        }
        assert_eq!(table.find(hash, &24), None);
        assert_eq!(table.entries().count(), 24);
        let (moved, _) = Table::with_entries(
            24,
            Placement::AS_HASHED,
            table.entries().map(|&(k, v)| (hash, k, v)),
        );
        for key in 0..24 {
            assert_eq!(moved.find(hash, &key), Some(&(key + 1)));
        }
    }

    /// A key whose tag no entry of its home group has is absent at once
    /// only if that group has room; a full home group sends the lookup on
    /// to the group the key spilled into.
    #[test]
    fn a_full_home_group_does_not_end_a_lookup_without_candidates() {
        // 24 slots ask for 4 groups; hashes 0x00 and 0x01 share home group
        // 0 but not their tags.
        let table: Table<u64, u64> = Table::with_capacity(24);
        for key in 0..8 {
            unsafe { table.put(0x00, key, key) };
        }
        assert_eq!(table.find(0x01, &100), None, "absent, home group full");
        unsafe { table.put(0x01, 100, 7) };
        assert_eq!(
            table.find(0x01, &100),
            Some(&7),
            "spilled to the next group"
        );
        assert_eq!(table.find(0x02, &200), None, "absent, home group full");
        let roomy: Table<u64, u64> = Table::with_capacity(24);
        unsafe { roomy.put(0x00, 1, 1) };
        assert_eq!(roomy.find(0x01, &2), None, "absent, home group with room");
        assert_eq!(roomy.find(0x00, &1), Some(&1));
    }

    #[test]
    fn a_table_built_with_entries_finds_them_and_takes_more() {
        let entries = (0..6u64).map(|key| (key % 2, key, key * 10));
        let (table, _): (Table<u64, u64>, _) =
            Table::with_entries(8, Placement::AS_HASHED, entries);
        for key in 0..6 {
            assert_eq!(table.find(key % 2, &key), Some(&(key * 10)));
        }
        assert_eq!(unsafe { *table.put(1, 6, 60) }, 60);
        assert_eq!(table.find(1, &6), Some(&60));
        assert_eq!(table.entries().count(), 7);
    }

    /// Entries are dropped exactly once: with the table, or when taken, or
    /// with a partly consumed `take_entries`.
    #[test]
    fn every_written_entry_is_dropped_once() {
        use std::sync::Arc;
        let token = Arc::new(());
        let filled = || {
            let table: Table<u64, Arc<()>> = Table::with_capacity(8);
            for key in 0..5 {
                unsafe { table.put(key, key, Arc::clone(&token)) };
            }
            table
        };
        drop(filled());
        assert_eq!(Arc::strong_count(&token), 1, "dropped with the table");

        let mut table = filled();
        let mut taken = table.take_entries();
        let first = taken.next().expect("five entries");
        assert_eq!(Arc::strong_count(&token), 6, "one taken, four still inside");
        drop(taken);
        assert_eq!(
            Arc::strong_count(&token),
            2,
            "the rest dropped with the iterator"
        );
        drop(first);
        drop(table);
        assert_eq!(
            Arc::strong_count(&token),
            1,
            "nothing left in the emptied table"
        );

        let mut table = filled();
        assert_eq!(table.take_entries().count(), 5);
        assert_eq!(Arc::strong_count(&token), 1);
    }

    /// Taking walks every group in turn, whichever slots hold entries.
    #[test]
    fn take_entries_yields_each_entry_of_every_group_once() {
        let mut table: Table<u64, u64> = Table::with_capacity(64);
        for key in 0..40u64 {
            // Hashes spread over the groups' homes and tags alike.
            let hash = key.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            unsafe { table.put(hash, key, key * 10) };
        }
        let mut taken: Vec<(u64, u64)> = table.take_entries().collect();
        taken.sort_unstable();
        let expected: Vec<(u64, u64)> = (0..40).map(|key| (key, key * 10)).collect();
        assert_eq!(taken, expected);
        assert_eq!(table.entries().count(), 0, "the table is left empty");
    }

    #[test]
    fn entries_without_a_niche_take_no_discriminant() {
        // The tag says which entries are written, so none carries an `Option`.
        assert_eq!(std::mem::size_of::<Entry<u64, crate::PackedWord>>(), 16);
        assert_eq!(std::mem::size_of::<Entry<String, crate::PackedWord>>(), 32);
    }

    #[test]
    fn groups_start_on_cache_lines_without_padding() {
        type Stored = <String as crate::key::Key>::Stored;
        assert_eq!(
            std::mem::size_of::<EntryGroup<u64, crate::PackedWord>>(),
            8 * 16
        );
        assert_eq!(
            std::mem::size_of::<EntryGroup<Stored, crate::PackedWord>>(),
            8 * 32
        );
        let table: Table<u64, u64> = Table::with_capacity(100);
        for group in table.entries.iter() {
            assert_eq!(std::ptr::from_ref(group).addr() % 64, 0);
        }
    }

    #[test]
    fn a_tag_match_with_another_key_is_not_a_hit() {
        let table: Table<String, u8> = Table::with_capacity(4);
        unsafe { table.put(0x85, "a".to_string(), 1) };
        // Same low seven bits, different key.
        assert_eq!(table.find(0x05, "b"), None);
        assert_eq!(table.find(0x85, "a"), Some(&1));
    }
}
