//! [`Acquire`]: waiting for capacity instead of being turned away, on every
//! limiter of the crate.

use crate::key::Key;
use std::borrow::Borrow;
use std::sync::Arc;
use std::time::Duration;

use crate::algorithm::Algorithm;
use crate::clock::Clock;
use crate::direct::DirectLimiter;
use crate::fixed_window::FixedWindowRule;
use crate::keyed::KeyedLimiter;
use crate::limiter::RateLimiter;
use crate::registry::Registry;
use crate::sliding_window_counter::SlidingWindowCounterRule;
use crate::sliding_window_log::SlidingWindowLogRule;
use crate::token_bucket::TokenBucketRule;
use crate::wait::error::WaitError;
use crate::wait::sleeper::Sleeper;
use crate::wait::waiter::Waiter;
#[cfg(feature = "tokio")]
use crate::wait::{async_sleeper::AsyncSleeper, async_sleeper::TokioSleeper};

/// Waits until `cost` units pass for `key`, or fails at once when they
/// cannot within the timeout.
///
/// Token buckets wait by [reservation](Waiter::acquire_reserving) (served in
/// arrival order); every other limiter
/// [re-checks](Waiter::acquire_retrying) when its retry hint has passed. See
/// the [module docs](crate::wait). Each call returns how long it waited:
/// zero when the units were there, without a sleep.
///
/// A limiter over a rule written outside the crate joins when the rule
/// implements [`RechecksWhenWaiting`]; any other [`RateLimiter`] type joins
/// with an empty `impl Acquire<Q> for L {}`. Both re-check.
///
/// ```
/// use std::time::Duration;
/// use tollgate::{Quota, TokenBucket};
/// use tollgate::wait::{Acquire, WaitError};
///
/// let limiter: TokenBucket = TokenBucket::new(Quota::per_second(1000));
/// let waited = limiter.acquire("client-42", 1, Duration::from_millis(50))?;
/// assert_eq!(waited, Duration::ZERO); // the bucket starts full
/// // More than the bucket holds can never pass: an error at once.
/// assert!(matches!(
///     limiter.acquire("client-42", 5000, Duration::MAX),
///     Err(WaitError::Capacity(_))
/// ));
/// # Ok::<(), WaitError>(())
/// ```
pub trait Acquire<Q: ?Sized = str>: RateLimiter<Q> {
    /// Blocks the calling thread until `cost` units for `key` are spent.
    ///
    /// Fails at once, spending nothing, with [`WaitError::Capacity`] when the
    /// cost can never fit and with [`WaitError::Timeout`] when the wait
    /// needed is longer than `timeout`: it never sleeps just to fail. A wait
    /// exactly as long as `timeout` succeeds.
    fn acquire(&self, key: &Q, cost: u64, timeout: Duration) -> Result<Duration, WaitError> {
        self.acquire_with(&Waiter::new(), key, cost, timeout)
    }

    /// [`acquire`](Self::acquire), passing time with `waiter`'s sleeper and
    /// jitter.
    fn acquire_with<S: Sleeper>(
        &self,
        waiter: &Waiter<S>,
        key: &Q,
        cost: u64,
        timeout: Duration,
    ) -> Result<Duration, WaitError> {
        waiter.acquire_retrying(self, key, cost, timeout)
    }

    /// [`acquire`](Self::acquire) without blocking the thread: sleeps on the
    /// `tokio` timer, which the running runtime must enable.
    ///
    /// Cancel-safe: dropping the future before it completes gives back what
    /// it had reserved (see [`Reservation::cancel`](crate::wait::Reservation::cancel));
    /// a re-checking wait holds nothing between checks.
    #[cfg(feature = "tokio")]
    fn acquire_async<'a>(
        &'a self,
        key: &'a Q,
        cost: u64,
        timeout: Duration,
    ) -> impl Future<Output = Result<Duration, WaitError>> + Send + 'a
    where
        Q: Sync,
    {
        async move {
            let waiter = Waiter::with_sleeper(TokioSleeper);
            self.acquire_async_with(&waiter, key, cost, timeout).await
        }
    }

    /// [`acquire_async`](Self::acquire_async), passing time with `waiter`.
    #[cfg(feature = "tokio")]
    fn acquire_async_with<'a, S: AsyncSleeper>(
        &'a self,
        waiter: &'a Waiter<S>,
        key: &'a Q,
        cost: u64,
        timeout: Duration,
    ) -> impl Future<Output = Result<Duration, WaitError>> + Send + 'a
    where
        Q: Sync,
    {
        waiter.acquire_retrying_async(self, key, cost, timeout)
    }
}

impl<K, C, Q> Acquire<Q> for KeyedLimiter<TokenBucketRule, K, C>
where
    K: Key,
    C: Clock,
    Q: Borrow<K::Lookup> + ToOwned + ?Sized,
    // The reservation keeps an owned key while the async wait sleeps.
    Q::Owned: Send,
{
    fn acquire_with<S: Sleeper>(
        &self,
        waiter: &Waiter<S>,
        key: &Q,
        cost: u64,
        timeout: Duration,
    ) -> Result<Duration, WaitError> {
        waiter.acquire_reserving(self, key, cost, timeout)
    }

    #[cfg(feature = "tokio")]
    fn acquire_async_with<'a, S: AsyncSleeper>(
        &'a self,
        waiter: &'a Waiter<S>,
        key: &'a Q,
        cost: u64,
        timeout: Duration,
    ) -> impl Future<Output = Result<Duration, WaitError>> + Send + 'a
    where
        Q: Sync,
    {
        waiter.acquire_reserving_async(self, key, cost, timeout)
    }
}

impl<C: Clock> Acquire<()> for DirectLimiter<TokenBucketRule, C> {
    fn acquire_with<S: Sleeper>(
        &self,
        waiter: &Waiter<S>,
        key: &(),
        cost: u64,
        timeout: Duration,
    ) -> Result<Duration, WaitError> {
        waiter.acquire_reserving(self, key, cost, timeout)
    }

    #[cfg(feature = "tokio")]
    fn acquire_async_with<'a, S: AsyncSleeper>(
        &'a self,
        waiter: &'a Waiter<S>,
        key: &'a (),
        cost: u64,
        timeout: Duration,
    ) -> impl Future<Output = Result<Duration, WaitError>> + Send + 'a {
        waiter.acquire_reserving_async(self, key, cost, timeout)
    }
}

/// A rule whose limiters wait by re-checking: [`Acquire`] then comes with
/// its [`KeyedLimiter`] and [`DirectLimiter`].
///
/// The crate's window rules implement it (they keep no room for units
/// promised to a later window); the token bucket does not, as it waits by
/// reservation. A rule written outside the crate opts in with an empty impl,
/// which Rust's orphan rules would not allow for `Acquire` on the limiter
/// itself:
///
/// ```
/// # use tollgate::{Algorithm, FixedWindowRule, Quota};
/// # struct MyRule(FixedWindowRule);
/// # impl Algorithm for MyRule {
/// #     type State = <FixedWindowRule as Algorithm>::State;
/// #     fn from_quota(quota: &Quota) -> Self { MyRule(FixedWindowRule::from_quota(quota)) }
/// #     fn fresh(&self) -> Self::State { self.0.fresh() }
/// #     fn limit(&self) -> u64 { self.0.limit() }
/// #     fn check(&self, state: &Self::State, now: u64, cost: u64) -> Option<tollgate::Decision> {
/// #         self.0.check(state, now, cost)
/// #     }
/// #     fn is_fresh(&self, state: &Self::State, now: u64) -> bool { self.0.is_fresh(state, now) }
/// #     fn reset_bound_nanos(&self) -> u64 { self.0.reset_bound_nanos() }
/// # }
/// use std::time::Duration;
/// use tollgate::KeyedLimiter;
/// use tollgate::wait::{Acquire, RechecksWhenWaiting};
///
/// impl RechecksWhenWaiting for MyRule {}
///
/// let limiter: KeyedLimiter<MyRule> = KeyedLimiter::new(Quota::per_second(10));
/// limiter.acquire("client-42", 1, Duration::from_millis(200))?;
/// # Ok::<(), tollgate::WaitError>(())
/// ```
pub trait RechecksWhenWaiting: Algorithm {}

impl RechecksWhenWaiting for FixedWindowRule {}
impl RechecksWhenWaiting for SlidingWindowCounterRule {}
impl RechecksWhenWaiting for SlidingWindowLogRule {}

impl<R, K, C, Q> Acquire<Q> for KeyedLimiter<R, K, C>
where
    R: RechecksWhenWaiting,
    K: Key,
    C: Clock,
    Q: Borrow<K::Lookup> + ToOwned + ?Sized,
{
}

impl<R: RechecksWhenWaiting, C: Clock> Acquire<()> for DirectLimiter<R, C> {}

impl Acquire<str> for Registry {}

/// Redis limiters decide in Redis, which holds no reservations: they
/// re-check.
#[cfg(feature = "redis")]
impl<A: crate::redis::RedisAlgorithm, C: crate::redis::Connect> Acquire<str>
    for crate::redis::RedisLimiter<A, C>
{
}

impl<'l, Q: ?Sized> Acquire<Q> for dyn RateLimiter<Q> + 'l {}

/// Forwards to the limiter behind a pointer, keeping its way of waiting.
macro_rules! acquire_through_pointer {
    ($($pointer:ty),* $(,)?) => {$(
        impl<Q: ?Sized, L: Acquire<Q> + ?Sized> Acquire<Q> for $pointer {
            fn acquire_with<S: Sleeper>(
                &self,
                waiter: &Waiter<S>,
                key: &Q,
                cost: u64,
                timeout: Duration,
            ) -> Result<Duration, WaitError> {
                (**self).acquire_with(waiter, key, cost, timeout)
            }

            #[cfg(feature = "tokio")]
            fn acquire_async_with<'a, S: AsyncSleeper>(
                &'a self,
                waiter: &'a Waiter<S>,
                key: &'a Q,
                cost: u64,
                timeout: Duration,
            ) -> impl Future<Output = Result<Duration, WaitError>> + Send + 'a
            where
                Q: Sync,
            {
                (**self).acquire_async_with(waiter, key, cost, timeout)
            }
        }
    )*};
}

acquire_through_pointer!(Arc<L>, Box<L>, &L);
