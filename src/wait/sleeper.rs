//! [`Sleeper`]: how a blocking wait passes time, so tests can pass it with a
//! [`ManualClock`] instead of the real clock.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::clock::{Clock, ManualClock, duration_to_nanos};

/// A clock that a thread can wait on.
///
/// Waits measure their timeout on this clock and pass time with
/// [`sleep`](Self::sleep). The limiter keeps deciding on its own clock, so
/// the two must move together: the real [`ThreadSleeper`] with a real clock,
/// a [`ManualSleeper`] over the very [`ManualClock`] the limiter reads.
pub trait Sleeper: Clock {
    /// Blocks the calling thread for at least `duration` of this clock.
    fn sleep(&self, duration: Duration);
}

/// Sleeps the thread with [`std::thread::sleep`]; times on the OS monotonic
/// clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadSleeper;

/// The origin of [`ThreadSleeper`]'s readings, shared by the process.
fn process_origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

impl Clock for ThreadSleeper {
    fn now_nanos(&self) -> u64 {
        duration_to_nanos(Instant::now().saturating_duration_since(process_origin()))
    }
}

impl Sleeper for ThreadSleeper {
    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// Passes time by advancing a [`ManualClock`]: a wait returns at once, with
/// the clock moved forward by exactly the time it would have slept.
///
/// ```
/// use std::time::Duration;
/// use tollgate::{ManualClock, Quota, RateLimiter, TokenBucket};
/// use tollgate::wait::{Acquire, ManualSleeper, Waiter};
///
/// let clock = ManualClock::new();
/// let limiter: TokenBucket<String, _> = TokenBucket::with_clock(Quota::per_second(1), clock.clone());
/// let waiter = Waiter::with_sleeper(ManualSleeper::new(clock.clone()));
/// assert!(limiter.allow("k"));
/// let waited = limiter.acquire_with(&waiter, "k", 1, Duration::from_secs(5))?;
/// assert_eq!(waited, Duration::from_secs(1));
/// assert_eq!(clock.elapsed(), Duration::from_secs(1));
/// # Ok::<(), tollgate::wait::WaitError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct ManualSleeper {
    clock: ManualClock,
}

impl ManualSleeper {
    /// A sleeper that advances `clock` (a clone sharing the limiter's time).
    pub fn new(clock: ManualClock) -> Self {
        ManualSleeper { clock }
    }

    /// The clock it advances.
    pub fn clock(&self) -> &ManualClock {
        &self.clock
    }
}

impl Clock for ManualSleeper {
    fn now_nanos(&self) -> u64 {
        self.clock.now_nanos()
    }
}

impl Sleeper for ManualSleeper {
    fn sleep(&self, duration: Duration) {
        self.clock.advance(duration);
    }
}
