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

/// Clients assigned to [`OTHER_TIER`] whom the benchmarks never ask about,
/// held by every registry made here: a real registry holds some
/// assignments, and `std`'s `HashMap` answers a lookup in an empty map
/// without hashing the key, which would let the locked baseline skip its
/// lookup when every client asked is unassigned.
fn bystanders() -> impl Iterator<Item = String> {
    (0..1_000).map(|i| format!("member-{i:08}"))
}

/// A `tollgate::Registry` of two token-bucket tiers on `spec`'s quota,
/// [`DEFAULT_TIER`] (the default) and [`OTHER_TIER`], holding the
/// bystanders.
pub fn two_tier_registry(spec: Spec) -> Registry {
    let registry = Registry::builder()
        .tier(DEFAULT_TIER, TokenBucket::<String>::new(spec.tollgate()))
        .tier(OTHER_TIER, TokenBucket::<String>::new(spec.tollgate()))
        .default_tier(DEFAULT_TIER)
        .build()
        .expect("valid tiers");
    for member in bystanders() {
        registry.assign(&member, OTHER_TIER).expect("known tier");
    }
    registry
}

/// The same two tiers as a [`LockedRegistry`] (index 0 the default, 1
/// the other), holding the same bystanders.
pub fn locked_two_tier_registry(spec: Spec) -> LockedRegistry {
    let tiers = (0..2)
        .map(|_| Box::new(TokenBucket::<String>::new(spec.tollgate())) as Box<dyn RateLimiter<str>>)
        .collect();
    let registry = LockedRegistry::new(tiers, 0);
    for member in bystanders() {
        registry.assign(&member, 1);
    }
    registry
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
