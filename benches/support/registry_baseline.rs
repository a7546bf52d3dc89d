//! The classic way to write a registry of tiers, for comparison with
//! `tollgate::Registry`: client assignments in a `std::sync::RwLock` around
//! a `HashMap`, in front of the same tier limiters, so the difference is the
//! assignment lookup alone.

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};

use tollgate::RateLimiter;

/// Tiers of limiters and a locked map from client to tier index.
pub struct LockedRegistry {
    tiers: Vec<Box<dyn RateLimiter<str>>>,
    default: usize,
    assignments: RwLock<HashMap<String, usize>>,
}

impl LockedRegistry {
    /// A registry of `tiers`, clients without an assignment on `default`.
    pub fn new(tiers: Vec<Box<dyn RateLimiter<str>>>, default: usize) -> Self {
        assert!(default < tiers.len(), "the default tier must exist");
        LockedRegistry {
            tiers,
            default,
            assignments: RwLock::new(HashMap::new()),
        }
    }

    /// Moves `client` to tier `index`.
    pub fn assign(&self, client: &str, index: usize) {
        assert!(index < self.tiers.len(), "no tier {index}");
        self.assignments
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(client.to_owned(), index);
    }

    /// Judges one request of `client` by its tier.
    #[inline]
    pub fn allow(&self, client: &str) -> bool {
        let index = self
            .assignments
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(client)
            .copied()
            .unwrap_or(self.default);
        self.tiers[index].allow(client)
    }
}
