//! [`Table`]: one shard's per-key states at a fixed capacity, found without
//! a lock.
//!
//! Open addressing with linear probing. Each slot has a one-byte tag and an
//! entry; the tag also publishes the entry:
//!
//! | tag        | meaning                                                        |
//! |------------|----------------------------------------------------------------|
//! | `0`        | empty: no entry, and a probe for any key stops here            |
//! | `1xxxxxxx` | taken: the entry is written, its key hashes to low bits `xxxxxxx` |
//!
//! An entry is written once, under the shard's lock, into a slot whose tag is
//! still empty; then the tag is stored with release ordering. A reader loads
//! a tag with acquire ordering and reads the entry only if the tag is taken,
//! so it sees the whole entry or none of it. Entries are never cleared or
//! replaced while the table is shared, so a reader holding the table can
//! borrow any entry it finds. A key leaves by having its state retired
//! ([`Retire`](crate::Retire)); its slot stays taken until the shard moves
//! its live entries to a new table.
//!
//! The tag is also the only record of which entries are written: an entry
//! is uninitialised memory until its tag is taken, so a `u64` key with a
//! `u64` state takes 16 bytes, not the 24 an `Option` around it would.
//!
//! This is the crate's one use of `unsafe`: a `OnceLock` per entry did the
//! same safely, but its publication costs two locked instructions per new
//! key where a release store is a plain store on x86-64, and insertions took
//! about half as long again with it (`docs/benchmarks.md`, levers). The tag
//! already had to be written, so it carries the publication.

#[cfg(any(test, tollgate_loom))]
use std::borrow::Borrow;
use std::mem::MaybeUninit;

use crate::sync::{AtomicU8, Ordering, UnsafeCell};

/// The tag of an empty slot.
const EMPTY: u8 = 0;

/// The tag bit every taken slot has.
const TAKEN: u8 = 0x80;

/// The first slot of `capacity` a key hashing to `hash` may sit in.
#[inline]
fn home_of(hash: u64, capacity: usize) -> usize {
    // Below `capacity`, so it fits a usize.
    ((u128::from(hash) * capacity as u128) >> 64) as usize
}

/// A slot's entry: initialised exactly when its tag is taken (module docs).
type Entry<K, V> = UnsafeCell<MaybeUninit<(K, V)>>;

/// A fixed-capacity table of `(key, state)` entries.
pub struct Table<K, V> {
    /// One tag per slot (layout in the module docs).
    tags: Box<[AtomicU8]>,
    /// The entry of each slot, written once under the shard's lock.
    entries: Box<[Entry<K, V>]>,
}

// SAFETY: threads sharing a table borrow keys and states from it (so both
// must be `Sync`) and find entries another thread moved in, and drop them
// with the table (so both must be `Send`). An entry is written only by
// `put`, whose contract leaves one writer per table and a slot no reader
// reads until the release store of its tag, after the write; it is never
// written again while shared.
#[allow(unsafe_code)]
unsafe impl<K: Send + Sync, V: Send + Sync> Sync for Table<K, V> {}

impl<K, V> Table<K, V> {
    /// An empty table of `capacity` slots (at least one).
    pub fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Table {
            tags: (0..capacity).map(|_| AtomicU8::new(EMPTY)).collect(),
            entries: (0..capacity)
                .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
                .collect(),
        }
    }

    /// A table of `capacity` slots holding `entries` (hash, key, state),
    /// built before anyone can see it, so its entries need no publication:
    /// whoever shares the table publishes them with it. The caller passes
    /// fewer entries than `capacity`; any beyond `capacity - 1` are dropped,
    /// so that a slot is always left empty and probes end.
    pub(crate) fn with_entries(
        capacity: usize,
        entries: impl IntoIterator<Item = (u64, K, V)>,
    ) -> Self {
        let capacity = capacity.max(1);
        let mut tags = vec![EMPTY; capacity];
        let mut slots: Vec<MaybeUninit<(K, V)>> =
            (0..capacity).map(|_| MaybeUninit::uninit()).collect();
        let mut entries = entries.into_iter();
        for (hash, key, state) in entries.by_ref().take(capacity - 1) {
            let mut slot = home_of(hash, capacity);
            while tags[slot] != EMPTY {
                slot = if slot + 1 == capacity { 0 } else { slot + 1 };
            }
            tags[slot] = Self::tag(hash);
            slots[slot] = MaybeUninit::new((key, state));
        }
        debug_assert!(entries.next().is_none(), "more entries than slots");
        Table {
            tags: tags.into_iter().map(AtomicU8::new).collect(),
            entries: slots.into_iter().map(UnsafeCell::new).collect(),
        }
    }

    /// Slots in the table.
    pub(crate) fn capacity(&self) -> usize {
        self.tags.len()
    }

    /// The tag for a key hashing to `hash`.
    #[inline]
    fn tag(hash: u64) -> u8 {
        // Keeps the low seven bits of the hash.
        TAKEN | (hash as u8 & !TAKEN)
    }

    /// The first slot a key hashing to `hash` may sit in: the high bits of
    /// the hash scaled to the capacity, so any capacity works.
    #[inline]
    fn home(&self, hash: u64) -> usize {
        home_of(hash, self.capacity())
    }

    /// The state for `key`, if an entry visible to this thread holds it.
    #[cfg(any(test, tollgate_loom))]
    pub fn find<Q>(&self, hash: u64, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        self.find_by(hash, |stored| stored.borrow() == key)
    }

    /// The state of the first entry visible to this thread whose key hashes
    /// to `hash` and satisfies `matches`.
    #[inline]
    pub fn find_by(&self, hash: u64, matches: impl Fn(&K) -> bool) -> Option<&V> {
        let tag = Self::tag(hash);
        let capacity = self.capacity();
        let mut slot = self.home(hash);
        for _ in 0..capacity {
            // Relaxed: here a tag only steers the probe, and a stale one only
            // makes the lookup report a miss; `entry` acquires before reading.
            let seen = self.tags[slot].load(Ordering::Relaxed);
            if seen == EMPTY {
                return None;
            }
            if seen == tag {
                if let Some((stored, state)) = self.entry(slot) {
                    if matches(stored) {
                        return Some(state);
                    }
                }
            }
            slot += 1;
            if slot == capacity {
                slot = 0;
            }
        }
        None
    }

    /// The entry in `slot`, if its tag says it is written.
    #[inline]
    fn entry(&self, slot: usize) -> Option<&(K, V)> {
        // Acquire: pairs with the release store in `put`, so the entry
        // written before the tag is visible here.
        if self.tags[slot].load(Ordering::Acquire) == EMPTY {
            return None;
        }
        self.entries[slot].with(|entry| {
            // SAFETY: the taken tag, loaded with acquire ordering, orders this
            // read after the entry's write: by `put`, which stores the tag
            // with release ordering after it, or by `with_entries`, before
            // the table was shared. No write follows while it is shared, so
            // a shared borrow for as long as `self` lives is sound. A taken
            // tag also means the entry is initialised (module docs).
            #[allow(unsafe_code)]
            unsafe {
                Some((*entry).assume_init_ref())
            }
        })
    }

    /// Puts `key` in the first empty slot of its probe and returns its
    /// state. For a key not in the table, with at least one slot empty.
    ///
    /// # Safety
    ///
    /// No other `put` on this table may run at once: callers hold the lock of
    /// the shard whose table this is. (Readers need no lock: they never read
    /// an entry whose tag is empty, and the tag is published after the write.)
    #[allow(unsafe_code)]
    pub unsafe fn put(&self, hash: u64, key: K, state: V) -> &V {
        let capacity = self.capacity();
        let mut slot = self.home(hash);
        // Relaxed: the caller is the only writer of tags, so it sees every
        // tag exactly.
        while self.tags[slot].load(Ordering::Relaxed) != EMPTY {
            slot += 1;
            if slot == capacity {
                slot = 0;
            }
        }
        let (_, state) = self.entries[slot].with_mut(|entry| {
            // SAFETY: the slot's tag is empty, so no reader reads this entry
            // (see `entry`), and by this function's contract no other writer
            // runs. An empty tag also means the entry holds nothing to drop:
            // a tag is set only together with its entry (here and in
            // `with_entries`). The shared borrow returned is made after the
            // write, and no write follows while the table is shared.
            unsafe { &*(*entry).write((key, state)) }
        });
        // Release: publishes the entry written above to readers that load
        // this tag with acquire ordering (`entry`).
        self.tags[slot].store(Self::tag(hash), Ordering::Release);
        state
    }

    /// Every entry, in slot order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = &(K, V)> {
        (0..self.capacity()).filter_map(|slot| self.entry(slot))
    }

    /// Takes every entry, by value, in slot order, leaving no slots.
    pub(crate) fn take_entries(&mut self) -> TakenEntries<K, V> {
        TakenEntries {
            tags: std::mem::take(&mut self.tags).into_vec().into_iter(),
            entries: std::mem::take(&mut self.entries).into_vec().into_iter(),
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
pub(crate) struct TakenEntries<K, V> {
    tags: std::vec::IntoIter<AtomicU8>,
    entries: std::vec::IntoIter<Entry<K, V>>,
}

impl<K, V> Iterator for TakenEntries<K, V> {
    type Item = (K, V);

    fn next(&mut self) -> Option<(K, V)> {
        loop {
            let tag = self.tags.next()?.into_inner();
            let entry = self.entries.next()?.into_inner();
            if tag != EMPTY {
                // SAFETY: a taken tag means the entry was written (module
                // docs), and each entry is yielded once: both iterators own
                // what they yield, so the table no longer holds it.
                #[allow(unsafe_code)]
                return Some(unsafe { entry.assume_init() });
            }
        }
    }
}

impl<K, V> Drop for TakenEntries<K, V> {
    fn drop(&mut self) {
        self.for_each(drop);
    }
}

#[cfg(all(test, not(tollgate_loom)))]
// SAFETY (every `put` below): one thread, so one writer.
#[allow(unsafe_code)]
mod tests {
    use super::*;

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
    fn a_table_built_with_entries_finds_them_and_takes_more() {
        let entries = (0..6u64).map(|key| (key % 2, key, key * 10));
        let table: Table<u64, u64> = Table::with_entries(8, entries);
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

    #[test]
    fn entries_without_a_niche_take_no_discriminant() {
        // The tag says which entries are written, so none carries an `Option`.
        assert_eq!(std::mem::size_of::<Entry<u64, crate::PackedWord>>(), 16);
        assert_eq!(std::mem::size_of::<Entry<String, crate::PackedWord>>(), 32);
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
