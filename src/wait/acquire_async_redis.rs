//! Async waiting on the async Redis limiters: the async re-checking loop,
//! fed by the limiter's awaited check.

use std::time::Duration;

use redis::aio::ConnectionLike;

use crate::redis::{AsyncRedisLimiter, RedisAlgorithm};
use crate::wait::async_sleeper::{AsyncSleeper, TokioSleeper};
use crate::wait::error::WaitError;
use crate::wait::waiter::Waiter;

/// Redis holds no reservations, so these waits re-check: each check is one
/// script call, and a denial sleeps its retry hint before the next.
impl<A, C> AsyncRedisLimiter<A, C>
where
    A: RedisAlgorithm,
    C: ConnectionLike + Clone + Send + Sync + 'static,
{
    /// Waits until `cost` units for `key` are spent, sleeping on the `tokio`
    /// timer between checks; returns how long it waited (zero without a
    /// sleep).
    ///
    /// Each check is [`check_n`](Self::check_n): when Redis cannot decide,
    /// the [failure policy](crate::redis::FailurePolicy) does, and the wait
    /// acts on its decision (fail closed retries after the per-call timeout,
    /// fail open passes, fallback waits on the in-memory limiter's hint).
    /// Fails at once, spending nothing, with [`WaitError::Capacity`] when
    /// the cost can never fit and with [`WaitError::Timeout`] when the wait a
    /// check asks for is longer than the time left: it never sleeps just to
    /// fail.
    ///
    /// Cancel-safe: the future holds nothing between checks, so dropping it
    /// while it sleeps leaves every unit unspent. Dropping it during a check
    /// is dropping that one script call, which Redis may already have run.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use tollgate::Quota;
    /// use tollgate::redis::AsyncRedisTokenBucket;
    ///
    /// # async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = redis::Client::open("redis://127.0.0.1:6379")?;
    /// let connection = client.get_connection_manager().await?;
    /// let limiter: AsyncRedisTokenBucket = AsyncRedisTokenBucket::new(Quota::per_second(10), connection);
    /// let waited = limiter.acquire_async("client-42", 1, Duration::from_secs(1)).await?;
    /// # let _ = waited;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn acquire_async(
        &self,
        key: &str,
        cost: u64,
        timeout: Duration,
    ) -> Result<Duration, WaitError> {
        let waiter = Waiter::with_sleeper(TokioSleeper);
        self.acquire_async_with(&waiter, key, cost, timeout).await
    }

    /// [`acquire_async`](Self::acquire_async), passing time with `waiter`'s
    /// sleeper and jitter.
    ///
    /// Redis reads its own clock, so a sleeper that does not really sleep
    /// (such as [`ManualSleeper`](crate::wait::ManualSleeper)) moves only
    /// the wait's deadline, not the limiter's time.
    pub async fn acquire_async_with<S: AsyncSleeper>(
        &self,
        waiter: &Waiter<S>,
        key: &str,
        cost: u64,
        timeout: Duration,
    ) -> Result<Duration, WaitError> {
        waiter
            .retry_checks_async(|| self.check_n(key, cost), timeout)
            .await
    }
}
