//! The async wait loops: the blocking ones with `.await` in place of the
//! sleep, and a guard that cancels the reservation if the future is dropped.

use std::time::Duration;

use crate::decision::Decision;
use crate::error::InsufficientCapacity;
use crate::limiter::RateLimiter;
use crate::wait::async_sleeper::AsyncSleeper;
use crate::wait::error::WaitError;
use crate::wait::plan::{Deadline, ReadyPlan, Retry, RetryPlan};
use crate::wait::reservation::{Reservation, Reserve};
use crate::wait::waiter::Waiter;

/// Cancels the reservation it holds when dropped before [`keep`](Self::keep).
struct CancelOnDrop<'a, L: Reserve<Q> + ?Sized, Q: ?Sized + ToOwned> {
    reservation: Option<Reservation<'a, L, Q>>,
}

impl<L: Reserve<Q> + ?Sized, Q: ?Sized + ToOwned> CancelOnDrop<'_, L, Q> {
    fn delay_nanos(&self) -> u64 {
        self.reservation
            .as_ref()
            .map_or(0, Reservation::delay_nanos)
    }

    /// The wait is over: the tokens stay spent.
    fn keep(mut self) {
        drop(self.reservation.take());
    }
}

impl<L: Reserve<Q> + ?Sized, Q: ?Sized + ToOwned> Drop for CancelOnDrop<'_, L, Q> {
    fn drop(&mut self) {
        if let Some(reservation) = self.reservation.take() {
            reservation.cancel();
        }
    }
}

impl<S: AsyncSleeper> Waiter<S> {
    /// [`acquire_retrying`](Waiter::acquire_retrying) on an async sleeper.
    ///
    /// Holds nothing between checks, so dropping the future gives nothing
    /// back because it took nothing.
    pub async fn acquire_retrying_async<L, Q>(
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
        self.retry_checks_async(|| std::future::ready(limiter.check_n(key, cost)), timeout)
            .await
    }

    /// The async re-checking loop, for any check that can be awaited: checks,
    /// sleeps the decision's retry hint, and checks again while it fits.
    pub(crate) async fn retry_checks_async<F, Fut>(
        &self,
        mut check: F,
        timeout: Duration,
    ) -> Result<Duration, WaitError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<Decision, InsufficientCapacity>>,
    {
        let deadline = Deadline::start(&self.sleeper, timeout);
        let mut plan = RetryPlan::new();
        let mut slept = false;
        loop {
            let checked = check().await;
            let left = deadline.left_nanos(&self.sleeper);
            match plan.after_check(checked, left, &self.jitter) {
                Retry::Done => return Ok(deadline.waited(&self.sleeper, slept)),
                Retry::Sleep(duration) => {
                    self.sleeper.sleep_async(duration).await;
                    slept = true;
                }
                Retry::Fail(error) => return Err(error),
            }
        }
    }

    /// [`acquire_reserving`](Waiter::acquire_reserving) on an async sleeper.
    ///
    /// Dropping the future before it completes cancels the reservation, which
    /// gives its tokens back if nothing taken after them still stands.
    pub async fn acquire_reserving_async<L, Q>(
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
                return self
                    .acquire_retrying_async(limiter, key, cost, timeout)
                    .await;
            }
            Err(error) => return Err(error),
        };
        let guard = CancelOnDrop {
            reservation: Some(reservation),
        };
        let mut plan = ReadyPlan::new();
        let mut slept = false;
        while let Some(duration) = plan.next_sleep(
            guard.delay_nanos(),
            deadline.left_nanos(&self.sleeper),
            &self.jitter,
        ) {
            self.sleeper.sleep_async(duration).await;
            slept = true;
        }
        guard.keep();
        Ok(deadline.waited(&self.sleeper, slept))
    }
}
