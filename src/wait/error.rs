//! [`WaitError`]: why a wait or a reservation gave up without capacity.

use std::fmt;
use std::time::Duration;

use crate::error::InsufficientCapacity;

/// Why [`acquire`](crate::wait::Acquire::acquire) or
/// [`reserve_within`](crate::wait::Reserve::reserve_within) returned without
/// the units.
///
/// Every variant is returned before anything is spent or reserved for the
/// call that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WaitError {
    /// The cost is above what the limiter can ever admit at once: waiting
    /// would never help.
    Capacity(InsufficientCapacity),
    /// The units would be due only after the time the caller agreed to wait.
    Timeout {
        /// How long the request would still have had to wait.
        needed: Duration,
        /// How much of the timeout was left when that was found out.
        left: Duration,
    },
    /// The limiter tracks as many keys as its cap allows and none is idle,
    /// so it cannot record a reservation for a new key.
    KeyCapReached,
}

impl From<InsufficientCapacity> for WaitError {
    fn from(error: InsufficientCapacity) -> Self {
        WaitError::Capacity(error)
    }
}

impl fmt::Display for WaitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaitError::Capacity(error) => error.fmt(f),
            WaitError::Timeout { needed, left } => write!(
                f,
                "the units are due in {needed:?}, later than the {left:?} left to wait"
            ),
            WaitError::KeyCapReached => f.write_str(
                "the limiter tracks its maximum of keys and cannot hold a reservation for a new one",
            ),
        }
    }
}

impl std::error::Error for WaitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WaitError::Capacity(error) => Some(error),
            _ => None,
        }
    }
}
