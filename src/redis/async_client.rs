//! [`AsyncRedisLimiter`]: the Redis limiter for async code on Tokio.

use std::fmt;

use redis::aio::ConnectionLike;

use super::algorithm::RedisAlgorithm;
use super::error::{BackendError, ConfigError, RedisLimitError};
use super::failure_policy::FailurePolicy;
use super::limiter_core::LimiterCore;
use super::options::RedisOptions;
use super::outcome::Outcome;
use crate::decision::Decision;
use crate::error::InsufficientCapacity;
use crate::quota::Quota;

/// A keyed limiter whose state lives in Redis, called from async code.
///
/// It takes any cloneable async connection: a
/// [`ConnectionManager`](redis::aio::ConnectionManager) (reconnects by
/// itself; the default), a
/// [`MultiplexedConnection`](redis::aio::MultiplexedConnection), or a
/// Cluster connection. Each call clones it, sends one `EVALSHA` and waits at
/// most the per-call timeout, which needs a Tokio runtime with its timer
/// enabled.
///
/// ```no_run
/// use tollgate::Quota;
/// use tollgate::redis::AsyncRedisFixedWindow;
///
/// # async fn serve() -> Result<(), redis::RedisError> {
/// let client = redis::Client::open("redis://127.0.0.1:6379")?;
/// let connection = client.get_connection_manager().await?;
/// let limiter: AsyncRedisFixedWindow = AsyncRedisFixedWindow::new(Quota::per_minute(100), connection);
/// if limiter.allow("client-42").await {
///     // serve the request
/// }
/// # Ok(())
/// # }
/// ```
pub struct AsyncRedisLimiter<A: RedisAlgorithm, C = redis::aio::ConnectionManager> {
    core: LimiterCore<A>,
    connection: C,
}

impl<A, C> AsyncRedisLimiter<A, C>
where
    A: RedisAlgorithm,
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    /// A limiter for `quota` on `connection` with default [`RedisOptions`].
    ///
    /// # Panics
    /// When the quota's window is longer than
    /// [`MAX_WINDOW`](super::MAX_WINDOW); [`with_options`](Self::with_options)
    /// returns [`ConfigError::WindowTooLong`] instead.
    pub fn new(quota: Quota, connection: C) -> Self {
        let core = LimiterCore::with_defaults(quota);
        AsyncRedisLimiter { core, connection }
    }

    /// A limiter for `quota` on `connection` with `options`; errors when the
    /// prefix holds a brace or the window is too long for the scripts.
    pub fn with_options(
        quota: Quota,
        connection: C,
        options: RedisOptions,
    ) -> Result<Self, ConfigError> {
        Ok(AsyncRedisLimiter {
            core: LimiterCore::new(quota, options)?,
            connection,
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

    /// Spends `cost` units for `key`, as
    /// [`RateLimiter::check_n`](crate::RateLimiter::check_n): the failure
    /// policy decides when Redis cannot, and the error is logged.
    pub async fn check_n(&self, key: &str, cost: u64) -> Result<Decision, InsufficientCapacity> {
        self.check_detailed(key, cost)
            .await
            .map(|outcome| outcome.decision())
    }

    /// Spends one unit for `key`.
    pub async fn check(&self, key: &str) -> Decision {
        match self.check_n(key, 1).await {
            Ok(decision) => decision,
            // Every quota admits one unit; answer with a rejection regardless.
            Err(error) => Decision::reject(error.max, 0, u64::MAX, u64::MAX),
        }
    }

    /// Whether one request for `key` goes through.
    #[must_use = "the unit is spent if allowed: act on the answer"]
    pub async fn allow(&self, key: &str) -> bool {
        self.check(key).await.allowed()
    }

    /// Spends `cost` units for `key` in Redis; a backend error is returned,
    /// not covered by the failure policy.
    pub async fn try_check_n(&self, key: &str, cost: u64) -> Result<Decision, RedisLimitError> {
        let call = self.core.invocation(key, cost)?;
        Ok(self.round_trip(&call).await?)
    }

    /// Spends `cost` units for `key`; when Redis cannot decide, the failure
    /// policy does, and the outcome carries the error.
    pub async fn check_detailed(
        &self,
        key: &str,
        cost: u64,
    ) -> Result<Outcome, InsufficientCapacity> {
        let call = self.core.invocation(key, cost)?;
        Ok(match self.round_trip(&call).await {
            Ok(decision) => Outcome::from_redis(decision),
            Err(error) => self.core.degrade(key, cost, error),
        })
    }

    async fn round_trip(
        &self,
        call: &redis::ScriptInvocation<'_>,
    ) -> Result<Decision, BackendError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(BackendError::NoRuntime);
        }
        let timeout = self.core.timeout();
        let mut connection = self.connection.clone();
        let reply = tokio::time::timeout(timeout, call.invoke_async::<Vec<i64>>(&mut connection))
            .await
            .map_err(|_| BackendError::Timeout(timeout))??;
        self.core.decision(&reply)
    }
}

impl<A: RedisAlgorithm, C> fmt::Debug for AsyncRedisLimiter<A, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncRedisLimiter")
            .field("quota", &self.core.quota())
            .field("policy", &self.core.policy())
            .field("timeout", &self.core.timeout())
            .finish_non_exhaustive()
    }
}
