//! [`MapHasher`]: a keyed store's `foldhash` seeds, kept in the store.
//!
//! `foldhash::fast::RandomState` reads its process-wide seeds from a static
//! on every hash. That static shares its cache lines with whatever statics
//! the linker puts beside it, so a thread that keeps writing one of them
//! (an allocator's counters, a metric) would make every lookup on the other
//! cores miss on the seeds. The store keeps its own copy of the seeds
//! instead, beside the fields every lookup already reads, where only the
//! store's owner decides what shares the line. The hash is foldhash's own;
//! only where its seeds live changes.

use std::hash::BuildHasher;

use foldhash::SharedSeed;
use foldhash::fast::FoldHasher;

/// Seeds for hashing one store's keys.
#[derive(Clone, Debug)]
pub(crate) struct MapHasher {
    /// Distinguishes this store's hashes from other stores' with the same
    /// shared seeds.
    per_store: u64,
    /// The six seeds foldhash mixes the key's bytes with.
    shared: SharedSeed,
}

impl MapHasher {
    /// Seeds drawn from a fresh `foldhash` random state, so collisions
    /// cannot be planned from outside the process (as with `RandomState`).
    #[cfg(not(tollgate_loom))]
    pub(crate) fn random() -> Self {
        let source = foldhash::fast::RandomState::default();
        MapHasher {
            per_store: source.hash_one(0_u64),
            shared: SharedSeed::from_u64(source.hash_one(1_u64)),
        }
    }

    /// The same seeds every time: `loom` replays each execution's choices in
    /// program order and needs every execution to lay the table out alike.
    #[cfg(tollgate_loom)]
    pub(crate) fn random() -> Self {
        MapHasher {
            per_store: 0x9e37_79b9_7f4a_7c15,
            shared: SharedSeed::from_u64(0x2545_f491_4f6c_dd1d),
        }
    }
}

impl<'a> BuildHasher for &'a MapHasher {
    type Hasher = FoldHasher<'a>;

    #[inline]
    fn build_hasher(&self) -> FoldHasher<'a> {
        FoldHasher::with_seed(self.per_store, &self.shared)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_store_hashes_a_key_alike_every_time() {
        let hasher = MapHasher::random();
        assert_eq!(
            (&hasher).hash_one("client-1"),
            (&hasher).hash_one("client-1")
        );
        assert_eq!((&hasher).hash_one(7_u64), (&hasher.clone()).hash_one(7_u64));
    }

    #[cfg(not(tollgate_loom))]
    #[test]
    fn stores_draw_their_own_seeds() {
        // Two stores agreeing on every one of 64 keys would mean the seeds
        // were not drawn per store (a chance of about 2^-4096 otherwise).
        let (a, b) = (MapHasher::random(), MapHasher::random());
        let differing = (0..64_u64)
            .filter(|key| (&a).hash_one(key) != (&b).hash_one(key))
            .count();
        assert!(differing > 0, "two stores hashed 64 keys identically");
    }
}
