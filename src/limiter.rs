//! The [`RateLimiter`] trait every limiter implements.

use crate::decision::Decision;
use crate::error::InsufficientCapacity;
use std::sync::Arc;

/// Decides, per key, whether requests go through.
///
/// `Q` is the borrowed key type a caller passes (`str` for `String` keys,
/// `u64` for `u64` keys). Implementations are `Send + Sync` and may be called
/// from any number of threads at once.
pub trait RateLimiter<Q: ?Sized = str>: Send + Sync {
    /// Spends `cost` units for `key` if they are available.
    ///
    /// A denied call changes no state. `cost == 0` is a peek: it consumes
    /// nothing and reports whether one unit would pass now. A cost above what
    /// the limiter can ever admit at once is an [`InsufficientCapacity`]
    /// error.
    #[must_use = "the units are spent if allowed: act on the decision"]
    fn check_n(&self, key: &Q, cost: u64) -> Result<Decision, InsufficientCapacity>;

    /// Spends one unit for `key`.
    #[inline]
    #[must_use = "the unit is spent if allowed: act on the decision"]
    fn check(&self, key: &Q) -> Decision {
        match self.check_n(key, 1) {
            Ok(decision) => decision,
            // Every quota admits at least one unit; an implementation that
            // cannot still answers with a rejection instead of panicking.
            Err(error) => Decision::reject(error.max, 0, u64::MAX, u64::MAX),
        }
    }

    /// Whether one request for `key` goes through.
    #[inline]
    #[must_use = "the unit is spent if allowed: act on the answer"]
    fn allow(&self, key: &Q) -> bool {
        self.check(key).allowed()
    }

    /// Whether a request of `cost` units for `key` goes through; `false` also
    /// when the cost could never fit (use [`check_n`](Self::check_n) to tell
    /// the two apart).
    #[inline]
    #[must_use = "the units are spent if allowed: act on the answer"]
    fn allow_n(&self, key: &Q, cost: u64) -> bool {
        self.check_n(key, cost)
            .is_ok_and(|decision| decision.allowed())
    }
}

/// `RateLimiter` for pointers to a limiter, forwarding every method so the
/// pointee's own `allow` path is kept.
macro_rules! forward_to_pointee {
    ($($pointer:ty),* $(,)?) => {$(
        impl<Q: ?Sized, L: RateLimiter<Q> + ?Sized> RateLimiter<Q> for $pointer {
            #[inline]
            fn check_n(&self, key: &Q, cost: u64) -> Result<Decision, InsufficientCapacity> {
                (**self).check_n(key, cost)
            }

            #[inline]
            fn allow(&self, key: &Q) -> bool {
                (**self).allow(key)
            }

            #[inline]
            fn allow_n(&self, key: &Q, cost: u64) -> bool {
                (**self).allow_n(key, cost)
            }
        }
    )*};
}

forward_to_pointee!(Arc<L>, Box<L>, &L);
