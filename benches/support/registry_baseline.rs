//! The classic way to write a registry of tiers, for comparison with
//! `tollgate::Registry`: client assignments in a `std::sync::RwLock` around
//! a `HashMap`, in front of the same tier limiters, so the difference is the
//! assignment lookup alone. Also the two-tier setup both registries are
//! measured with.

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};

use tollgate::{RateLimiter, Registry, TokenBucket};

use super::contenders::Spec;

/// The tier a client is on unless assigned.
pub const DEFAULT_TIER: &str = "free";

/// The tier clients are assigned to.
pub const OTHER_TIER: &str = "pro";

/// Clients assigned to [`OTHER_TIER`] whom the benchmarks never ask about:
/// a real registry holds some assignments, and `std`'s `HashMap` answers
/// a lookup in an empty map without hashing the key, which would let the
/// locked baseline skip its lookup when every client asked is unassigned.
pub fn bystanders() -> Vec<String> {
    (0..1_000).map(|i| format!("member-{i:08}")).collect()
}

/// Two token-bucket tiers on `spec`'s quota, the first the default.
pub fn token_bucket_tiers(spec: Spec) -> Vec<Box<dyn RateLimiter<str>>> {
    (0..2)
        .map(|_| Box::new(TokenBucket::<String>::new(spec.tollgate())) as Box<dyn RateLimiter<str>>)
        .collect()
}

/// A `tollgate::Registry` of the same two tiers: [`DEFAULT_TIER`] and
/// [`OTHER_TIER`].
pub fn two_tier_registry(spec: Spec) -> Registry {
    Registry::builder()
        .tier(DEFAULT_TIER, TokenBucket::<String>::new(spec.tollgate()))
        .tier(OTHER_TIER, TokenBucket::<String>::new(spec.tollgate()))
        .default_tier(DEFAULT_TIER)
        .build()
        .expect("valid tiers")
}

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
