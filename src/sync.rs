//! One switch between `std` and `loom` synchronisation primitives.
//!
//! Every atomic, lock and `Arc` the limiters use is imported from here, so
//! building with `--cfg tollgate_loom` hands the whole crate to the `loom`
//! model checker without touching any algorithm code. The cfg name is
//! crate-specific so dependencies that also know `loom` are not switched.

#[cfg(not(tollgate_loom))]
pub(crate) use std::sync::{
    Arc, Mutex, MutexGuard,
    atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering, fence},
};

#[cfg(tollgate_loom)]
pub(crate) use loom::sync::{
    Arc, Mutex, MutexGuard,
    atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering, fence},
};

#[cfg(tollgate_loom)]
pub(crate) use loom::cell::UnsafeCell;

/// `std`'s `UnsafeCell` behind `loom`'s closure-scoped API, so code written
/// for one compiles against the other; under `loom` every access is checked
/// against the model's happens-before order.
#[cfg(not(tollgate_loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(tollgate_loom))]
impl<T> UnsafeCell<T> {
    /// A cell holding `value`.
    pub(crate) const fn new(value: T) -> Self {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }

    /// The value, from an owned cell.
    pub(crate) fn into_inner(self) -> T {
        self.0.into_inner()
    }

    /// Runs `f` on a pointer for reading the value.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Runs `f` on a pointer for writing the value.
    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

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
