//! [`Jitter`]: a random extra delay on wake-ups, so waiters that would all
//! wake at one instant spread out instead of stampeding.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::time::Duration;

use crate::clock::duration_to_nanos;
use crate::sync::{AtomicU64, Ordering};

/// The splitmix64 increment (2^64 / golden ratio).
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// A random extra delay added to each sleep of a wait; off by default.
///
/// Jitter only ever lengthens a sleep, so it never lets a request through
/// early, and it is cut short where it would run past the wait's timeout.
/// A wait that needs no sleep gets none.
///
/// ```
/// use std::time::Duration;
/// use tollgate::wait::{Jitter, Waiter};
///
/// let waiter = Waiter::new().jitter(Jitter::up_to(Duration::from_millis(5)));
/// # let _ = waiter;
/// ```
#[derive(Debug)]
pub struct Jitter {
    max_nanos: u64,
    /// splitmix64 state: a counter stepped by one RMW per sample.
    state: AtomicU64,
}

impl Jitter {
    /// No jitter: every sleep is exactly as long as the wait needs.
    pub fn none() -> Self {
        Jitter {
            max_nanos: 0,
            state: AtomicU64::new(0),
        }
    }

    /// Adds a delay drawn uniformly from `0..=max` to each sleep.
    pub fn up_to(max: Duration) -> Self {
        let seed = RandomState::new().hash_one(GOLDEN_GAMMA);
        Jitter {
            max_nanos: duration_to_nanos(max),
            state: AtomicU64::new(seed),
        }
    }

    /// Replaces the random seed, for a reproducible sequence of delays.
    pub fn seeded(self, seed: u64) -> Self {
        Jitter {
            max_nanos: self.max_nanos,
            state: AtomicU64::new(seed),
        }
    }

    /// The largest delay added.
    pub fn max(&self) -> Duration {
        Duration::from_nanos(self.max_nanos)
    }

    /// A delay from `0..=min(max, limit)` nanoseconds.
    pub(crate) fn sample(&self, limit_nanos: u64) -> u64 {
        let bound = self.max_nanos.min(limit_nanos);
        if bound == 0 {
            return 0;
        }
        // Relaxed: the counter only has to hand each caller a distinct value;
        // no other memory is read through it.
        let step = self.state.fetch_add(GOLDEN_GAMMA, Ordering::Relaxed);
        let random = mix(step.wrapping_add(GOLDEN_GAMMA));
        // Multiply-shift maps 64 random bits onto 0..=bound without overflow.
        let scaled = (u128::from(random) * (u128::from(bound) + 1)) >> 64;
        u64::try_from(scaled).unwrap_or(bound)
    }
}

impl Default for Jitter {
    fn default() -> Self {
        Self::none()
    }
}

/// The splitmix64 output function.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(all(test, not(tollgate_loom)))]
mod tests {
    use super::*;

    #[test]
    fn none_adds_nothing() {
        let jitter = Jitter::none();
        assert!((0..100).all(|_| jitter.sample(u64::MAX) == 0));
    }

    #[test]
    fn samples_stay_within_max_and_limit() {
        let jitter = Jitter::up_to(Duration::from_nanos(1000)).seeded(7);
        let samples: Vec<u64> = (0..10_000).map(|_| jitter.sample(u64::MAX)).collect();
        assert!(samples.iter().all(|&s| s <= 1000));
        // Uniform over 1001 values: both halves get plenty of samples.
        let low = samples.iter().filter(|&&s| s < 500).count();
        assert!((4000..6000).contains(&low), "low half got {low}");
        assert!((0..1000).all(|_| jitter.sample(10) <= 10));
        assert_eq!(jitter.sample(0), 0);
    }

    #[test]
    fn same_seed_same_sequence() {
        let a = Jitter::up_to(Duration::from_secs(1)).seeded(42);
        let b = Jitter::up_to(Duration::from_secs(1)).seeded(42);
        let first: Vec<u64> = (0..20).map(|_| a.sample(u64::MAX)).collect();
        let second: Vec<u64> = (0..20).map(|_| b.sample(u64::MAX)).collect();
        assert_eq!(first, second);
        assert!(first.windows(2).any(|w| w[0] != w[1]));
    }
}
