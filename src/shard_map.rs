//! The concurrent map behind the registry's client-to-tier assignments,
//! reduced to the operations the registry needs. (Limiter states live in
//! [`StateMap`](crate::state_map::StateMap), whose lookups take no lock.)
//!
//! Normally a [`dashmap::DashMap`] hashed with `foldhash`. Under
//! `--cfg tollgate_loom` it is one `loom` `RwLock<HashMap>` that follows the
//! same locking protocol, because `loom` cannot see inside DashMap's locks:
//!
//! | operation          | DashMap                              | loom stand-in |
//! |--------------------|--------------------------------------|---------------|
//! | `read`             | shard read lock held while `f` runs  | read lock     |
//! | `insert`, `remove` | shard write lock                     | write lock    |

use std::borrow::Borrow;
use std::hash::Hash;

#[cfg(not(tollgate_loom))]
use foldhash::fast::RandomState;

#[cfg(not(tollgate_loom))]
pub(crate) struct ShardMap<K, V> {
    map: dashmap::DashMap<K, V, RandomState>,
}

#[cfg(not(tollgate_loom))]
impl<K: Hash + Eq, V> ShardMap<K, V> {
    /// A map with `shards` shards (rounded to a power of two), or DashMap's
    /// default (four per core) when `None`.
    pub(crate) fn new(shards: Option<usize>) -> Self {
        let map = match shards {
            Some(n) => dashmap::DashMap::with_hasher_and_shard_amount(
                RandomState::default(),
                n.clamp(2, 1 << 16).next_power_of_two(),
            ),
            None => dashmap::DashMap::with_hasher(RandomState::default()),
        };
        ShardMap { map }
    }

    /// Runs `f` on the value for `key` under the shard's read lock.
    #[inline]
    pub(crate) fn read<Q, R>(&self, key: &Q, f: impl FnOnce(&V) -> R) -> Option<R>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.get(key).map(|entry| f(entry.value()))
    }

    /// Sets the value for `key`.
    pub(crate) fn insert(&self, key: K, value: V) {
        self.map.insert(key, value);
    }

    /// Removes `key`; returns whether it was there.
    pub(crate) fn remove<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.remove(key).is_some()
    }

    /// Entries now (takes every shard's read lock in turn).
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}

/// A fixed-key hasher: `loom` replays each execution's choices in program
/// order, so iterating the map (`retain`) must visit keys in the same order
/// every time, which a randomly seeded hasher would not.
#[cfg(tollgate_loom)]
type FixedHasher = std::hash::BuildHasherDefault<std::hash::DefaultHasher>;

#[cfg(tollgate_loom)]
pub(crate) struct ShardMap<K, V> {
    map: crate::sync::RwLock<std::collections::HashMap<K, V, FixedHasher>>,
}

#[cfg(tollgate_loom)]
impl<K: Hash + Eq, V> ShardMap<K, V> {
    pub(crate) fn new(_shards: Option<usize>) -> Self {
        ShardMap {
            map: crate::sync::RwLock::new(std::collections::HashMap::default()),
        }
    }

    pub(crate) fn read<Q, R>(&self, key: &Q, f: impl FnOnce(&V) -> R) -> Option<R>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let map = self.map.read().unwrap_or_else(|e| e.into_inner());
        map.get(key).map(f)
    }

    pub(crate) fn insert(&self, key: K, value: V) {
        let mut map = self.map.write().unwrap_or_else(|e| e.into_inner());
        map.insert(key, value);
    }

    pub(crate) fn remove<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let mut map = self.map.write().unwrap_or_else(|e| e.into_inner());
        map.remove(key).is_some()
    }

    pub(crate) fn len(&self) -> usize {
        self.map.read().unwrap_or_else(|e| e.into_inner()).len()
    }
}
