//! [`Table`]: one shard's per-key states at a fixed capacity, found without
//! a lock.
//!
//! Open addressing with linear probing. Each slot has a one-byte tag and an
//! entry set once:
//!
//! | tag        | meaning                                             |
//! |------------|-----------------------------------------------------|
//! | `0`        | empty: no entry, and a probe for any key stops here  |
//! | `1xxxxxxx` | taken: the entry's key hashes to low bits `xxxxxxx` |
//!
//! Entries are written only under the shard's lock and never cleared or
//! replaced, so a reader holding the table can borrow any entry it finds. A
//! key leaves by having its state retired ([`Retire`](crate::Retire)); its
//! slot stays taken until the shard moves its live entries to a new table.
//!
//! A reader may see a tag before the entry behind it, or an empty tag where
//! an entry was just written: either way it reports the key as missing, and
//! the caller looks again under the shard's lock. It never sees a wrong key.

use std::borrow::Borrow;
use std::sync::OnceLock;

use crate::sync::{AtomicU8, Ordering};

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

/// A fixed-capacity table of `(key, state)` entries.
pub(crate) struct Table<K, V> {
    /// One tag per slot (layout in the module docs).
    tags: Box<[AtomicU8]>,
    /// The entry of each taken slot, set once under the shard's lock.
    entries: Box<[OnceLock<(K, V)>]>,
}

impl<K: Eq, V> Table<K, V> {
    /// An empty table of `capacity` slots (at least one).
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Table {
            tags: (0..capacity).map(|_| AtomicU8::new(EMPTY)).collect(),
            entries: (0..capacity).map(|_| OnceLock::new()).collect(),
        }
    }

    /// A table of `capacity` slots holding `entries` (hash, key, state),
    /// built before anyone can see it, so no entry pays for the once-only
    /// publication [`put`](Self::put) needs. The caller passes fewer entries
    /// than `capacity`; any beyond `capacity - 1` are dropped, so that a
    /// slot is always left empty and probes end.
    pub(crate) fn with_entries(
        capacity: usize,
        entries: impl IntoIterator<Item = (u64, K, V)>,
    ) -> Self {
        let capacity = capacity.max(1);
        let mut tags = vec![EMPTY; capacity];
        let mut slots: Vec<Option<(K, V)>> = (0..capacity).map(|_| None).collect();
        let mut entries = entries.into_iter();
        for (hash, key, state) in entries.by_ref().take(capacity - 1) {
            let mut slot = home_of(hash, capacity);
            while tags[slot] != EMPTY {
                slot = if slot + 1 == capacity { 0 } else { slot + 1 };
            }
            tags[slot] = Self::tag(hash);
            slots[slot] = Some((key, state));
        }
        debug_assert!(entries.next().is_none(), "more entries than slots");
        Table {
            tags: tags.into_iter().map(AtomicU8::new).collect(),
            entries: slots
                .into_iter()
                .map(|entry| entry.map_or_else(OnceLock::new, OnceLock::from))
                .collect(),
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
    #[inline]
    pub(crate) fn find<Q>(&self, hash: u64, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        let tag = Self::tag(hash);
        let capacity = self.capacity();
        let mut slot = self.home(hash);
        for _ in 0..capacity {
            // Relaxed: a tag only steers the probe; the entry is read through
            // its OnceLock, which acquires what the inserter wrote, and a
            // stale tag only makes the lookup report a miss.
            let seen = self.tags[slot].load(Ordering::Relaxed);
            if seen == EMPTY {
                return None;
            }
            if seen == tag {
                if let Some((k, state)) = self.entries[slot].get() {
                    if k.borrow() == key {
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

    /// Puts `key` in the first empty slot of its probe and returns its
    /// state. Only under the shard's lock, for a key not in the table, with
    /// at least one slot empty.
    pub(crate) fn put(&self, hash: u64, key: K, state: V) -> &V {
        let capacity = self.capacity();
        let mut slot = self.home(hash);
        // Relaxed: the lock holder is the only writer of tags, so it sees
        // every tag exactly.
        while self.tags[slot].load(Ordering::Relaxed) != EMPTY {
            slot += 1;
            if slot == capacity {
                slot = 0;
            }
        }
        // An empty tag means the entry is unset: both are written only here.
        let (_, state) = self.entries[slot].get_or_init(|| (key, state));
        // Relaxed: readers find the entry through the OnceLock (acquire), not
        // through the tag.
        self.tags[slot].store(Self::tag(hash), Ordering::Relaxed);
        state
    }

    /// Takes every entry, by value, in slot order, leaving no slots.
    pub(crate) fn take_entries(&mut self) -> impl Iterator<Item = (K, V)> + use<K, V> {
        self.tags = Box::default();
        std::mem::take(&mut self.entries)
            .into_vec()
            .into_iter()
            .filter_map(OnceLock::into_inner)
    }

    /// Every entry, in slot order.
    pub(crate) fn entries(&self) -> impl Iterator<Item = &(K, V)> {
        self.entries.iter().filter_map(OnceLock::get)
    }
}

#[cfg(all(test, not(tollgate_loom)))]
mod tests {
    use super::*;

    #[test]
    fn finds_what_it_put_even_when_every_key_shares_a_home() {
        let table: Table<u64, u64> = Table::with_capacity(8);
        for key in 0..7 {
            // One hash for all: every key probes from the same slot.
            assert_eq!(*table.put(42, key, key * 10), key * 10);
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
        assert_eq!(*table.put(1, 6, 60), 60);
        assert_eq!(table.find(1, &6), Some(&60));
        assert_eq!(table.entries().count(), 7);
    }

    #[test]
    fn a_tag_match_with_another_key_is_not_a_hit() {
        let table: Table<String, u8> = Table::with_capacity(4);
        table.put(0x85, "a".to_string(), 1);
        // Same low seven bits, different key.
        assert_eq!(table.find(0x05, "b"), None);
        assert_eq!(table.find(0x85, "a"), Some(&1));
    }
}
