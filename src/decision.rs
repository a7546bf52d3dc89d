//! [`Decision`]: the verdict on one request and the figures HTTP headers need.

use std::time::Duration;

/// The outcome of one check: whether it passed, and the state of the key.
///
/// The figures map directly onto the IETF `RateLimit` and `Retry-After`
/// headers: [`limit`](Self::limit), [`remaining`](Self::remaining),
/// [`reset_after`](Self::reset_after) and [`retry_after`](Self::retry_after).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use = "a decision to act on: units were spent if it allowed"]
pub struct Decision {
    allowed: bool,
    limit: u64,
    remaining: u64,
    retry_after_nanos: u64,
    reset_after_nanos: u64,
}

impl Decision {
    /// An admitted request; `remaining` counts units left after it.
    pub fn admit(limit: u64, remaining: u64, reset_after_nanos: u64) -> Decision {
        Decision {
            allowed: true,
            limit,
            remaining,
            retry_after_nanos: 0,
            reset_after_nanos,
        }
    }

    /// A rejected request that would pass after `retry_after_nanos`.
    pub fn reject(
        limit: u64,
        remaining: u64,
        retry_after_nanos: u64,
        reset_after_nanos: u64,
    ) -> Decision {
        Decision {
            allowed: false,
            limit,
            remaining,
            retry_after_nanos,
            reset_after_nanos,
        }
    }

    /// Whether the request passed.
    #[inline]
    pub fn allowed(&self) -> bool {
        self.allowed
    }

    /// The most units the key can spend at once (the bucket capacity, or the
    /// limit per window).
    #[inline]
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Units the key could still spend right now, after this request.
    #[inline]
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// How long until the same request would pass; zero when it passed.
    #[inline]
    pub fn retry_after(&self) -> Duration {
        Duration::from_nanos(self.retry_after_nanos)
    }

    /// [`retry_after`](Self::retry_after) in nanoseconds.
    #[inline]
    pub fn retry_after_nanos(&self) -> u64 {
        self.retry_after_nanos
    }

    /// How long until the key is back to its fresh state (full bucket, empty
    /// window) if nothing more is spent.
    #[inline]
    pub fn reset_after(&self) -> Duration {
        Duration::from_nanos(self.reset_after_nanos)
    }

    /// [`reset_after`](Self::reset_after) in nanoseconds.
    #[inline]
    pub fn reset_after_nanos(&self) -> u64 {
        self.reset_after_nanos
    }
}
