//! [`Registry`]: named tiers of limiters and the clients assigned to them.

use std::collections::HashMap;
use std::fmt;

use crate::decision::Decision;
use crate::error::{InsufficientCapacity, RegistryError, UnknownTier};
use crate::limiter::RateLimiter;
use crate::packed_word::{PackedWord, Step};
use crate::state_map::{Seen, StateMap};
use crate::table_fill::TableFill;

/// Maps clients to tiers of limiters; itself a [`RateLimiter<str>`].
///
/// Tiers are fixed when the registry is built; clients move between them at
/// run time with [`assign`](Self::assign). A client with no assignment uses
/// the default tier. Each call reads the client's assignment once, so a call
/// racing an `assign` is judged by exactly one tier: the old or the new.
/// The tier's limiter is keyed by the client name.
///
/// ```
/// use tollgate::{Quota, RateLimiter, Registry, TokenBucket};
///
/// let registry = Registry::builder()
///     .tier("free", TokenBucket::<String>::new(Quota::per_minute(1)))
///     .tier("pro", TokenBucket::<String>::new(Quota::per_minute(100)))
///     .default_tier("free")
///     .build()?;
/// registry.assign("acme", "pro")?;
/// assert!(registry.allow("acme") && registry.allow("acme"));
/// assert!(registry.allow("guest") && !registry.allow("guest"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Registry {
    tiers: Vec<Tier>,
    by_name: HashMap<String, usize>,
    default: usize,
    /// Each assigned client's tier index, in a word the map can retire.
    /// Every call reads it, so it lives in the map the limiters use, whose
    /// lookups (hits and misses alike) take no lock and write nothing
    /// shared.
    assignments: StateMap<String, PackedWord>,
}

struct Tier {
    name: String,
    limiter: Box<dyn RateLimiter<str>>,
}

impl Registry {
    /// Starts describing a registry.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// Moves `client` to `tier` from its next call on.
    pub fn assign(&self, client: &str, tier: &str) -> Result<(), UnknownTier> {
        let bits = index_bits(self.index_of(tier)?);
        self.assignments.read_or_insert(
            client,
            || PackedWord::new(bits),
            |word, _| {
                // A state found under the lock is live, so this stores.
                let _ = word.update(|_| Step {
                    decision: (),
                    next: Some(bits),
                });
            },
        );
        Ok(())
    }

    /// Returns `client` to the default tier; true if it had an assignment.
    pub fn unassign(&self, client: &str) -> bool {
        self.assignments.remove(client)
    }

    /// The limiter that judges `client`'s requests.
    pub fn for_client(&self, client: &str) -> &dyn RateLimiter<str> {
        self.limiter_at(self.tier_index(client))
    }

    /// Tier `index`'s limiter, chosen by branches rather than by indexing
    /// among the first [`BRANCHED_TIERS`].
    ///
    /// Indexing with the loaded assignment makes the tier's own lookup
    /// wait for that load; a predicted branch lets it start at once. With
    /// every assigned client on one tier, the registry made 26-37 % more
    /// decisions on one thread on the 2-core Xeon and 11-16 % more on two;
    /// with calls falling on two tiers at random the branch mispredicts,
    /// and it made 8-12 % and 2-7 % fewer (`docs/benchmarks.md`,
    /// "Registry"). `black_box` keeps the compiler from folding the loop
    /// back into an index.
    #[inline]
    fn limiter_at(&self, index: usize) -> &dyn RateLimiter<str> {
        for (at, tier) in self.tiers.iter().take(BRANCHED_TIERS).enumerate() {
            if std::hint::black_box(at) == index {
                return &*tier.limiter;
            }
        }
        // Assigned indices always name a tier, so the default is never
        // taken here; it stands in for a panic.
        let tier = self.tiers.get(index).unwrap_or(&self.tiers[self.default]);
        &*tier.limiter
    }

    /// The name of `client`'s tier.
    pub fn tier_of(&self, client: &str) -> &str {
        &self.tiers[self.tier_index(client)].name
    }

    /// The limiter of the tier called `name`.
    pub fn tier(&self, name: &str) -> Result<&dyn RateLimiter<str>, UnknownTier> {
        Ok(&*self.tiers[self.index_of(name)?].limiter)
    }

    /// The default tier's name.
    pub fn default_tier(&self) -> &str {
        &self.tiers[self.default].name
    }

    /// Clients with an explicit assignment.
    pub fn assigned_clients(&self) -> usize {
        self.assignments.len()
    }

    #[inline]
    fn tier_index(&self, client: &str) -> usize {
        match self.assignments.read_or_absent(client, tier_in) {
            Seen::Live(index) => index,
            Seen::Absent => self.default,
            Seen::Unsure => self.tier_index_locked(client),
        }
    }

    /// The slow path of `tier_index`: this thread's table for the client's
    /// shard was missing or replaced.
    #[cold]
    #[inline(never)]
    fn tier_index_locked(&self, client: &str) -> usize {
        self.assignments
            .read_locked(client, tier_in)
            .flatten()
            .unwrap_or(self.default)
    }

    fn index_of(&self, tier: &str) -> Result<usize, UnknownTier> {
        self.by_name.get(tier).copied().ok_or_else(|| UnknownTier {
            name: tier.to_owned(),
        })
    }
}

impl RateLimiter<str> for Registry {
    #[inline]
    fn check_n(&self, client: &str, cost: u64) -> Result<Decision, InsufficientCapacity> {
        self.for_client(client).check_n(client, cost)
    }

    #[inline]
    fn allow(&self, client: &str) -> bool {
        self.for_client(client).allow(client)
    }

    #[inline]
    fn allow_n(&self, client: &str, cost: u64) -> bool {
        self.for_client(client).allow_n(client, cost)
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.tiers.iter().map(|tier| tier.name.as_str()).collect();
        f.debug_struct("Registry")
            .field("tiers", &names)
            .field("default", &self.default_tier())
            .finish_non_exhaustive()
    }
}

/// A tier index as an assignment word holds it.
fn index_bits(index: usize) -> u64 {
    // A tier index counts tiers held in memory, far below the retired
    // marker (all ones).
    index as u64
}

/// The tier index an assignment word holds; `None` once it is retired.
#[inline]
fn tier_in(word: &PackedWord) -> Option<usize> {
    let bits = word.load();
    // Fits: the word holds an index stored by `index_bits`.
    (bits != PackedWord::RETIRED).then_some(bits as usize)
}

/// Tiers that [`Registry::limiter_at`] picks by branches; past them, a
/// registry call waits for the assignment like an indexed load, but the
/// compares a call makes stay few.
const BRANCHED_TIERS: usize = 4;

/// Describes a [`Registry`]: its tiers and which one is the default.
#[derive(Default)]
pub struct RegistryBuilder {
    tiers: Vec<Tier>,
    default: Option<String>,
    robust_hash: bool,
}

impl RegistryBuilder {
    /// Adds a tier called `name` judged by `limiter`.
    pub fn tier(mut self, name: &str, limiter: impl RateLimiter<str> + 'static) -> Self {
        self.tiers.push(Tier {
            name: name.to_owned(),
            limiter: Box::new(limiter),
        });
        self
    }

    /// Names the tier used for clients with no assignment.
    pub fn default_tier(mut self, name: &str) -> Self {
        self.default = Some(name.to_owned());
        self
    }

    /// Fold the hashes of clients' names in the assignment map from the
    /// start, as
    /// [`KeyedOptions::robust_hash`](crate::KeyedOptions::robust_hash)
    /// does a limiter's keys (default off; by default the map folds once
    /// its names crowd): the fold's multiply on every call, made before
    /// the name's shard is known. The tiers' limiters
    /// take the option in their own [`KeyedOptions`](crate::KeyedOptions).
    pub fn robust_hash(mut self, robust: bool) -> Self {
        self.robust_hash = robust;
        self
    }

    /// Builds the registry; errors on no tiers, a repeated tier name, or a
    /// missing or unknown default tier.
    pub fn build(self) -> Result<Registry, RegistryError> {
        if self.tiers.is_empty() {
            return Err(RegistryError::NoTiers);
        }
        let mut by_name = HashMap::with_capacity(self.tiers.len());
        for (index, tier) in self.tiers.iter().enumerate() {
            if by_name.insert(tier.name.clone(), index).is_some() {
                return Err(RegistryError::DuplicateTier {
                    name: tier.name.clone(),
                });
            }
        }
        let default_name = self.default.ok_or(RegistryError::NoDefaultTier)?;
        let default = *by_name.get(&default_name).ok_or_else(|| {
            RegistryError::UnknownDefaultTier(UnknownTier {
                name: default_name.clone(),
            })
        })?;
        Ok(Registry {
            tiers: self.tiers,
            by_name,
            default,
            assignments: StateMap::new(None, TableFill::DEFAULT, self.robust_hash),
        })
    }
}

impl fmt::Debug for RegistryBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.tiers.iter().map(|tier| tier.name.as_str()).collect();
        f.debug_struct("RegistryBuilder")
            .field("tiers", &names)
            .field("default", &self.default)
            .field("robust_hash", &self.robust_hash)
            .finish()
    }
}

#[cfg(all(test, not(tollgate_loom)))]
mod tests {
    use super::*;
    use crate::{ManualClock, Quota, TokenBucket};

    /// The builder's option reaches the assignment map.
    #[test]
    fn the_robust_hash_option_reaches_the_assignments() {
        for robust in [false, true] {
            let registry = Registry::builder()
                .tier(
                    "free",
                    TokenBucket::<String, _>::with_clock(Quota::per_hour(2), ManualClock::new()),
                )
                .default_tier("free")
                .robust_hash(robust)
                .build()
                .unwrap();
            assert_eq!(registry.assignments.hashes_robustly(), robust);
        }
    }
}
