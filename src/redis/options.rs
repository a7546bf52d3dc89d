//! [`RedisOptions`]: the settings shared by the blocking and async limiters.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::failure_policy::FailurePolicy;
use crate::clock::Clock;

/// The per-call timeout used unless another is set.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(100);

/// The shortest per-call timeout; shorter ones are raised to it.
pub const MIN_TIMEOUT: Duration = Duration::from_millis(1);

/// The longest per-call timeout, a day; longer ones are lowered to it, so a
/// call's deadline always fits the clock (`Duration::MAX` is a request to
/// wait as long as it takes, and a day is that for one round trip).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// Settings of a Redis limiter.
///
/// ```
/// use std::time::Duration;
/// use tollgate::redis::{FailurePolicy, RedisOptions};
///
/// let options = RedisOptions::new()
///     .prefix("api:v1:")
///     .failure_policy(FailurePolicy::Fallback)
///     .timeout(Duration::from_millis(20));
/// # let _ = options;
/// ```
#[derive(Clone)]
pub struct RedisOptions {
    pub(crate) prefix: Option<String>,
    pub(crate) policy: FailurePolicy,
    pub(crate) timeout: Duration,
    pub(crate) injected_clock: Option<Arc<dyn Clock>>,
}

impl Default for RedisOptions {
    fn default() -> Self {
        RedisOptions {
            prefix: None,
            policy: FailurePolicy::default(),
            timeout: DEFAULT_TIMEOUT,
            injected_clock: None,
        }
    }
}

impl RedisOptions {
    /// The algorithm's default prefix, [`FailurePolicy::FailClosed`] and a
    /// [`DEFAULT_TIMEOUT`] per call.
    pub fn new() -> Self {
        Self::default()
    }

    /// Puts every Redis key under `prefix` (no `{` or `}`: the limiter key
    /// is the Cluster hash tag). Limiters with different quotas or algorithms
    /// need different prefixes.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// What to decide when Redis cannot.
    pub fn failure_policy(mut self, policy: FailurePolicy) -> Self {
        self.policy = policy;
        self
    }

    /// How long one call may wait for Redis in all (connecting, sending and
    /// the reply); at least [`MIN_TIMEOUT`], at most [`MAX_TIMEOUT`]. A call
    /// past it is a [`BackendError::Timeout`](super::BackendError::Timeout).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.clamp(MIN_TIMEOUT, MAX_TIMEOUT);
        self
    }

    /// Times every decision by `clock` instead of the Redis server's `TIME`.
    ///
    /// Meant for tests and simulations: it brings back the client clocks the
    /// server time exists to avoid. The clock's nanoseconds are truncated to
    /// microseconds, and since Redis still expires keys in real time, each
    /// key is kept at least an hour.
    pub fn injected_clock(mut self, clock: impl Clock) -> Self {
        self.injected_clock = Some(Arc::new(clock));
        self
    }
}

impl fmt::Debug for RedisOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisOptions")
            .field("prefix", &self.prefix)
            .field("policy", &self.policy)
            .field("timeout", &self.timeout)
            .field("injected_clock", &self.injected_clock.is_some())
            .finish()
    }
}
