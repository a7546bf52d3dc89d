//! [`RedisLimiter`]: the blocking Redis limiter.

use std::fmt;
use std::time::Instant;

use super::algorithm::RedisAlgorithm;
use super::connect::Connect;
use super::error::{BackendError, ConfigError, RedisLimitError};
use super::failure_policy::FailurePolicy;
use super::limiter_core::LimiterCore;
use super::options::{MIN_TIMEOUT, RedisOptions};
use super::outcome::Outcome;
use super::pool::Pool;
use crate::decision::Decision;
use crate::error::InsufficientCapacity;
use crate::limiter::RateLimiter;
use crate::quota::Quota;

/// A keyed limiter whose state lives in Redis, called from blocking code.
///
/// Use it through [`RedisTokenBucket`](super::RedisTokenBucket),
/// [`RedisFixedWindow`](super::RedisFixedWindow),
/// [`RedisSlidingWindowLog`](super::RedisSlidingWindowLog) and
/// [`RedisSlidingWindowCounter`](super::RedisSlidingWindowCounter). Each
/// decision is one `EVALSHA` round trip on a pooled connection; connections
/// are opened lazily, so building a limiter never touches the network.
///
/// [`RateLimiter::check_n`] applies the [`FailurePolicy`] when Redis cannot
/// decide and logs the error; [`check_detailed`](Self::check_detailed) also
/// returns it, and [`try_check_n`](Self::try_check_n) returns it instead of
/// applying the policy.
///
/// ```no_run
/// use tollgate::{Quota, RateLimiter};
/// use tollgate::redis::RedisTokenBucket;
///
/// let client = redis::Client::open("redis://127.0.0.1:6379")?;
/// let limiter: RedisTokenBucket = RedisTokenBucket::new(Quota::per_second(10), client);
/// if limiter.allow("client-42") {
///     // serve the request
/// }
/// # Ok::<(), redis::RedisError>(())
/// ```
pub struct RedisLimiter<A: RedisAlgorithm, C: Connect = redis::Client> {
    core: LimiterCore<A>,
    connector: C,
    pool: Pool<C::Connection>,
}

impl<A: RedisAlgorithm, C: Connect> RedisLimiter<A, C> {
    /// A limiter for `quota` on `connector` with default [`RedisOptions`].
    ///
    /// # Panics
    /// When the quota's window is longer than
    /// [`MAX_WINDOW`](super::MAX_WINDOW); [`with_options`](Self::with_options)
    /// returns [`ConfigError::WindowTooLong`] instead.
    pub fn new(quota: Quota, connector: C) -> Self {
        let core = LimiterCore::with_defaults(quota);
        RedisLimiter {
            core,
            connector,
            pool: Pool::new(),
        }
    }

    /// A limiter for `quota` on `connector` with `options`; errors when the
    /// prefix holds a brace or the window is too long for the scripts.
    pub fn with_options(
        quota: Quota,
        connector: C,
        options: RedisOptions,
    ) -> Result<Self, ConfigError> {
        Ok(RedisLimiter {
            core: LimiterCore::new(quota, options)?,
            connector,
            pool: Pool::new(),
        })
    }

    /// The quota this limiter enforces.
    pub fn quota(&self) -> Quota {
        self.core.quota()
    }

    /// What this limiter decides when Redis cannot.
    pub fn failure_policy(&self) -> FailurePolicy {
        self.core.policy()
    }

    /// The Redis keys `key`'s state is stored under.
    pub fn redis_keys(&self, key: &str) -> Vec<Vec<u8>> {
        self.core.redis_keys(key)
    }

    /// Spends `cost` units for `key` in Redis; a backend error is returned,
    /// not covered by the failure policy.
    pub fn try_check_n(&self, key: &str, cost: u64) -> Result<Decision, RedisLimitError> {
        let call = self.core.invocation(key, cost)?;
        Ok(self.round_trip(&call)?)
    }

    /// Spends `cost` units for `key`; when Redis cannot decide, the failure
    /// policy does, and the outcome carries the error.
    pub fn check_detailed(&self, key: &str, cost: u64) -> Result<Outcome, InsufficientCapacity> {
        let call = self.core.invocation(key, cost)?;
        Ok(match self.round_trip(&call) {
            Ok(decision) => Outcome::from_redis(decision),
            Err(error) => self.core.degrade(key, cost, error),
        })
    }

    /// One script call on a pooled connection, within one per-call deadline.
    fn round_trip(&self, call: &redis::ScriptInvocation<'_>) -> Result<Decision, BackendError> {
        let timeout = self.core.timeout();
        let deadline = Instant::now() + timeout;
        let map = |error: redis::RedisError| {
            if error.is_timeout() {
                BackendError::Timeout(timeout)
            } else {
                BackendError::Redis(error)
            }
        };
        // Pooled connections carry the full timeout, which is what is left.
        if let Some(mut pooled) = self.pool.take() {
            match call.invoke::<Vec<i64>>(&mut pooled) {
                Ok(reply) => {
                    self.pool.put(pooled);
                    return self.core.decision(&reply);
                }
                // The server closed an idle connection (e.g. it restarted), so
                // the script almost surely never ran: retry once on a new one.
                // Should it have run, a unit is spent twice: stricter, not looser.
                Err(error) if error.is_connection_dropped() => {}
                // A connection that failed is dropped, never pooled.
                Err(error) => return Err(map(error)),
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left < MIN_TIMEOUT {
            return Err(BackendError::Timeout(timeout));
        }
        let mut fresh = self.connector.connect(left).map_err(map)?;
        let left = deadline
            .saturating_duration_since(Instant::now())
            .max(MIN_TIMEOUT);
        C::set_timeouts(&fresh, left).map_err(map)?;
        let reply = call.invoke::<Vec<i64>>(&mut fresh).map_err(map)?;
        if C::set_timeouts(&fresh, timeout).is_ok() {
            self.pool.put(fresh);
        }
        self.core.decision(&reply)
    }
}

impl<A: RedisAlgorithm, C: Connect> RateLimiter<str> for RedisLimiter<A, C> {
    fn check_n(&self, key: &str, cost: u64) -> Result<Decision, InsufficientCapacity> {
        self.check_detailed(key, cost)
            .map(|outcome| outcome.decision())
    }
}

impl<A: RedisAlgorithm + fmt::Debug, C: Connect> fmt::Debug for RedisLimiter<A, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisLimiter")
            .field("quota", &self.core.quota())
            .field("policy", &self.core.policy())
            .field("timeout", &self.core.timeout())
            .finish_non_exhaustive()
    }
}
