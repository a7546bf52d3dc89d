//! [`AsyncSleeper`]: how an async wait passes time without blocking its
//! runtime; [`TokioSleeper`] for real, [`ManualSleeper`] in tests.

use std::sync::OnceLock;
use std::time::Duration;

use crate::clock::{Clock, duration_to_nanos};
use crate::wait::sleeper::ManualSleeper;

/// A clock that an async task can wait on; the async form of
/// [`Sleeper`](crate::wait::Sleeper), with the same rule: it must move the
/// limiter's clock too.
pub trait AsyncSleeper: Clock {
    /// Completes after at least `duration` of this clock.
    fn sleep_async(&self, duration: Duration) -> impl Future<Output = ()> + Send;
}

/// Sleeps on the `tokio` timer ([`tokio::time::sleep`]); times on
/// [`tokio::time::Instant`], so a paused test runtime pauses it too.
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioSleeper;

/// The origin of [`TokioSleeper`]'s readings, shared by the process.
fn process_origin() -> tokio::time::Instant {
    static ORIGIN: OnceLock<tokio::time::Instant> = OnceLock::new();
    *ORIGIN.get_or_init(tokio::time::Instant::now)
}

impl Clock for TokioSleeper {
    fn now_nanos(&self) -> u64 {
        let now = tokio::time::Instant::now();
        duration_to_nanos(now.saturating_duration_since(process_origin()))
    }
}

impl AsyncSleeper for TokioSleeper {
    fn sleep_async(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        tokio::time::sleep(duration)
    }
}

impl AsyncSleeper for ManualSleeper {
    /// Advances the clock and completes at once.
    fn sleep_async(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        self.clock().advance(duration);
        std::future::ready(())
    }
}
