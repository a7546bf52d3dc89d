//! Error values returned instead of panics.

use std::fmt;

/// A cost that no state of the limiter could ever admit.
///
/// Returned by [`check_n`](crate::RateLimiter::check_n) when `cost` exceeds
/// the bucket capacity or the per-window limit; waiting would never help.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InsufficientCapacity {
    /// The cost asked for.
    pub requested: u64,
    /// The most units that can ever pass in one call.
    pub max: u64,
}

impl InsufficientCapacity {
    /// `Err` when `cost` is above `max`, the most one call can spend.
    #[inline]
    pub(crate) fn check(cost: u64, max: u64) -> Result<(), InsufficientCapacity> {
        if cost > max {
            return Err(InsufficientCapacity {
                requested: cost,
                max,
            });
        }
        Ok(())
    }
}

impl fmt::Display for InsufficientCapacity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a cost of {} can never be admitted: at most {} units pass in one call",
            self.requested, self.max
        )
    }
}

impl std::error::Error for InsufficientCapacity {}

/// A tier name the registry does not know.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UnknownTier {
    /// The name that was asked for.
    pub name: String,
}

impl fmt::Display for UnknownTier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no tier named {:?}", self.name)
    }
}

impl std::error::Error for UnknownTier {}

/// Why a [`Registry`](crate::Registry) could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryError {
    /// No tier was added.
    NoTiers,
    /// No default tier was named.
    NoDefaultTier,
    /// The default tier names no added tier.
    UnknownDefaultTier(UnknownTier),
    /// Two tiers were added under one name.
    DuplicateTier {
        /// The repeated name.
        name: String,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::NoTiers => f.write_str("a registry needs at least one tier"),
            RegistryError::NoDefaultTier => {
                f.write_str("a registry needs a default tier (RegistryBuilder::default_tier)")
            }
            RegistryError::UnknownDefaultTier(unknown) => {
                write!(f, "the default tier is unknown: {unknown}")
            }
            RegistryError::DuplicateTier { name } => write!(f, "tier {name:?} was added twice"),
        }
    }
}

impl std::error::Error for RegistryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RegistryError::UnknownDefaultTier(unknown) => Some(unknown),
            _ => None,
        }
    }
}
