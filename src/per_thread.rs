//! [`PerThread`]: a value per thread, one for each owner, found on the hot
//! path through a small memo in the thread's own storage.
//!
//! The values live in a [`thread_local::ThreadLocal`], which finds the
//! calling thread's value through a lazily set-up thread id (a call), a
//! bucket and a presence flag. A keyed lookup asks for it on every
//! decision, and with two threads those instructions held back the misses
//! that follow (`docs/benchmarks.md`, levers). So each thread also keeps,
//! in a plain `thread_local!` of its own, which owner it last served in each
//! of a few ways and where its value for that owner lives:
//!
//! | way `w` (`owner id % WAYS`) | meaning                                   |
//! |-----------------------------|-------------------------------------------|
//! | `(0, null)`                 | empty: no owner recorded                  |
//! | `(id, address)`             | owner `id`'s value for this thread is at `address` |
//!
//! Once a value is recorded, every borrow of it goes through the recorded
//! address, so all of them share one provenance (what Miri checks).
//!
//! Owner ids come from a process-wide counter and are never reused, so an
//! entry can only ever match the owner that recorded it: an owner dropped
//! and another made at the same address has a new id. An owner that finds
//! its id in its way is alive (it is borrowed for the call), and
//! `ThreadLocal` neither moves nor frees a value while it lives, so the
//! recorded address is still its value for this thread.

use std::cell::Cell;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};

use thread_local::ThreadLocal;

/// Owners each thread remembers at once; owners whose ids share a way take
/// turns in it.
const WAYS: usize = 8;

/// The id of owners made after every other id was handed out: never
/// recorded, so such owners always take the slow path.
const UNREMEMBERED: u64 = u64::MAX;

/// The next owner id; 0 marks an empty way and is never handed out.
static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's memo (layout in the module docs).
    static RECENT: [Cell<(u64, *const ())>; WAYS] =
        const { [const { Cell::new((0, ptr::null())) }; WAYS] };
}

/// One `T` per thread that asks, owned by this value.
pub(crate) struct PerThread<T: Send> {
    /// This owner's id, unique in the process (or [`UNREMEMBERED`]).
    id: u64,
    values: ThreadLocal<T>,
}

impl<T: Send> PerThread<T> {
    /// An owner with no values yet and a fresh id.
    pub(crate) fn new() -> Self {
        // Relaxed: the id only has to be unique, and the counter is its
        // own only data.
        let id = NEXT_OWNER
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |next| {
                (next < UNREMEMBERED).then(|| next + 1)
            })
            .unwrap_or(UNREMEMBERED);
        PerThread {
            id,
            values: ThreadLocal::new(),
        }
    }

    /// This thread's value, made by `make` on the thread's first call.
    #[inline]
    pub(crate) fn get_or(&self, make: impl FnOnce() -> T) -> &T {
        match self.recorded() {
            Some(value) => value,
            None => self.remember(make),
        }
    }

    /// This thread's value, if it has one.
    pub(crate) fn get(&self) -> Option<&T> {
        if let Some(value) = self.recorded() {
            return Some(value);
        }
        let value = self.values.get()?;
        self.record(value);
        Some(value)
    }

    /// This thread's value, if its memo holds this owner.
    #[inline]
    fn recorded(&self) -> Option<&T> {
        let (owner, value) = RECENT.with(|recent| recent[self.way()].get());
        if owner != self.id {
            return None;
        }
        // SAFETY: only `record` writes a way, on this thread, with this
        // thread's value of the owner whose id it writes. Ids are never
        // reused and `UNREMEMBERED` is never written, so that owner is
        // `self`, alive for as long as the returned borrow; `ThreadLocal`
        // keeps each thread's value in place until it is dropped itself, and
        // hands it to no other thread while this one runs. Every borrow of
        // the value goes through the recorded address while it is recorded
        // (`get` and `get_or` record what they find through `ThreadLocal`),
        // so the borrows share one provenance and a `RefCell` write through
        // one cannot invalidate another.
        #[allow(unsafe_code)]
        Some(unsafe { &*value.cast::<T>() })
    }

    /// The slow path of [`get_or`](Self::get_or): finds or makes the value
    /// through `ThreadLocal` and records it in this thread's memo.
    #[cold]
    #[inline(never)]
    fn remember(&self, make: impl FnOnce() -> T) -> &T {
        let value = self.values.get_or(make);
        self.record(value);
        value
    }

    /// Records `value`, this thread's, in this thread's memo.
    fn record(&self, value: &T) {
        if self.id != UNREMEMBERED {
            let address = ptr::from_ref(value).cast::<()>();
            RECENT.with(|recent| recent[self.way()].set((self.id, address)));
        }
    }

    /// This owner's way in every thread's memo.
    #[inline]
    fn way(&self) -> usize {
        // Truncation keeps the low bits, all the modulus needs.
        self.id as usize % WAYS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Owners sharing a way, used in turns, each get their own value back.
    #[test]
    fn owners_sharing_a_way_keep_their_own_values() {
        let owners: Vec<PerThread<usize>> = (0..3 * WAYS).map(|_| PerThread::new()).collect();
        for round in 0..3 {
            for (i, owner) in owners.iter().enumerate() {
                assert_eq!(*owner.get_or(|| i), i, "round {round}");
            }
        }
    }

    /// A value made on one thread is not another thread's.
    #[test]
    fn each_thread_has_its_own_value() {
        let owner = PerThread::new();
        assert_eq!(*owner.get_or(|| 1), 1);
        std::thread::scope(|s| {
            s.spawn(|| assert_eq!(*owner.get_or(|| 2), 2));
        });
        assert_eq!(*owner.get_or(|| 3), 1);
    }

    /// An owner made where a dropped one lived does not find its values.
    #[test]
    fn a_new_owner_at_a_freed_address_starts_empty() {
        for _ in 0..100 {
            let first = Box::new(PerThread::new());
            assert_eq!(*first.get_or(|| 1), 1);
            drop(first);
            let second = Box::new(PerThread::new());
            assert_eq!(*second.get_or(|| 2), 2);
        }
    }

    /// Ids are distinct and never the empty mark.
    #[test]
    fn ids_are_unique_and_not_empty() {
        let owners: Vec<PerThread<()>> = (0..64).map(|_| PerThread::new()).collect();
        let mut ids: Vec<u64> = owners.iter().map(|o| o.id).collect();
        assert!(ids.iter().all(|&id| id != 0));
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), owners.len());
    }
}
