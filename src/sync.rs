//! One switch between `std` and `loom` synchronisation primitives.
//!
//! Every atomic, lock and `Arc` the limiters use is imported from here, so
//! building with `--cfg tollgate_loom` hands the whole crate to the `loom`
//! model checker without touching any algorithm code. The cfg name is
//! crate-specific so dependencies that also know `loom` are not switched.

#[cfg(not(tollgate_loom))]
pub(crate) use std::sync::{
    Arc, Mutex, MutexGuard,
    atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering},
};

#[cfg(tollgate_loom)]
pub(crate) use loom::sync::{
    Arc, Mutex, MutexGuard, RwLock,
    atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering},
};

/// Locks `mutex`, recovering the data if a panicking thread poisoned it.
///
/// The limiters never panic while holding a lock, so a poisoned lock can only
/// come from a caller's panic elsewhere; the guarded state is still a valid
/// value of its type and is used as is.
#[inline]
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
