//! [`Waiter`]: how a caller waits (sleeper and jitter), and the two blocking
//! wait loops.

use std::time::Duration;

use crate::limiter::RateLimiter;
use crate::wait::error::WaitError;
use crate::wait::jitter::Jitter;
use crate::wait::plan::{Deadline, ReadyPlan, Retry, RetryPlan};
use crate::wait::reservation::Reserve;
use crate::wait::sleeper::{Sleeper, ThreadSleeper};

/// The settings of a wait: what passes time, and the jitter on wake-ups.
///
/// [`Acquire::acquire`](crate::wait::Acquire::acquire) uses
/// `Waiter::new()`: real sleeps, no jitter. Pass another one to
/// [`Acquire::acquire_with`](crate::wait::Acquire::acquire_with).
#[derive(Debug, Default)]
pub struct Waiter<S = ThreadSleeper> {
    pub(crate) sleeper: S,
    pub(crate) jitter: Jitter,
}

impl Waiter<ThreadSleeper> {
    /// Sleeps the thread, without jitter.
    pub fn new() -> Self {
        Self::with_sleeper(ThreadSleeper)
    }
}

impl<S> Waiter<S> {
    /// Passes time with `sleeper`, without jitter.
    pub fn with_sleeper(sleeper: S) -> Self {
        Waiter {
            sleeper,
            jitter: Jitter::none(),
        }
    }

    /// Adds `jitter` to each wake-up.
    pub fn jitter(self, jitter: Jitter) -> Self {
        Waiter { jitter, ..self }
    }

    /// What passes time.
    pub fn sleeper(&self) -> &S {
        &self.sleeper
    }
}

impl<S: Sleeper> Waiter<S> {
    /// Waits by checking again when the limiter's retry hint has passed.
    ///
    /// Works with any [`RateLimiter`]. Returns how long it waited (zero
    /// without a sleep). Fails at once, spending nothing, when `cost` can
    /// never fit or when the wait a check asks for is longer than the time
    /// left; a check that loses a race after a sleep makes it sleep again if
    /// the new wait still fits.
    pub fn acquire_retrying<L, Q>(
        &self,
        limiter: &L,
        key: &Q,
        cost: u64,
        timeout: Duration,
    ) -> Result<Duration, WaitError>
    where
        L: RateLimiter<Q> + ?Sized,
        Q: ?Sized,
    {
        let deadline = Deadline::start(&self.sleeper, timeout);
        let mut plan = RetryPlan::new();
        let mut slept = false;
        loop {
            let left = deadline.left_nanos(&self.sleeper);
            match plan.after_check(limiter.check_n(key, cost), left, &self.jitter) {
                Retry::Done => return Ok(deadline.waited(&self.sleeper, slept)),
                Retry::Sleep(duration) => {
                    self.sleeper.sleep(duration);
                    slept = true;
                }
                Retry::Fail(error) => return Err(error),
            }
        }
    }

    /// Waits by reserving: takes the tokens at once (in debt if need be) and
    /// sleeps until they are due.
    ///
    /// Waiters are served in the order their reservations landed. Returns how
    /// long it waited; fails at once, reserving nothing, when `cost` can
    /// never fit or is due later than `timeout`. A new key refused by the key
    /// cap is waited for by re-checking instead.
    pub fn acquire_reserving<L, Q>(
        &self,
        limiter: &L,
        key: &Q,
        cost: u64,
        timeout: Duration,
    ) -> Result<Duration, WaitError>
    where
        L: Reserve<Q> + ?Sized,
        Q: ?Sized + ToOwned,
    {
        let deadline = Deadline::start(&self.sleeper, timeout);
        let reservation = match limiter.reserve_within(key, cost, timeout) {
            Ok(reservation) => reservation,
            Err(WaitError::KeyCapReached) => {
                return self.acquire_retrying(limiter, key, cost, timeout);
            }
            Err(error) => return Err(error),
        };
        let mut plan = ReadyPlan::new();
        let mut slept = false;
        while let Some(duration) = plan.next_sleep(
            reservation.delay_nanos(),
            deadline.left_nanos(&self.sleeper),
            &self.jitter,
        ) {
            self.sleeper.sleep(duration);
            slept = true;
        }
        // Due: the tokens are the caller's now; dropping keeps them spent.
        drop(reservation);
        Ok(deadline.waited(&self.sleeper, slept))
    }
}
