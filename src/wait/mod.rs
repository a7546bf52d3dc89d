//! Waiting for capacity instead of being turned away.
//!
//! * [`Acquire::acquire`] blocks the thread until `cost` units pass, or fails
//!   at once when they cannot within the timeout; with the `tokio` feature,
//!   `Acquire::acquire_async` does the same without blocking the runtime.
//! * [`Reserve::reserve`] takes token-bucket tokens now, in debt if need be,
//!   and says how long until they may be used; [`Reservation::cancel`] gives
//!   them back if nothing taken after them still stands.
//! * A [`Waiter`] says how time passes (a [`Sleeper`]; [`ManualSleeper`]
//!   drives waits with a [`ManualClock`](crate::ManualClock) in tests) and
//!   how much [`Jitter`] to add to wake-ups (none by default).
//!
//! Sleeps are computed from the state, never polled: a token bucket knows
//! when the missing tokens are due, a window limiter when enough units leave
//! its window. Nothing here touches the check path, which stays one CAS.
//!
//! # What each limiter supports
//!
//! | limiter | waits by | order of service | `reserve` |
//! |---|---|---|---|
//! | [`TokenBucket`](crate::TokenBucket), `DirectLimiter<TokenBucketRule, _>` | reservation | arrival order | yes |
//! | [`FixedWindow`](crate::FixedWindow), [`SlidingWindowCounter`](crate::SlidingWindowCounter), [`SlidingWindowLog`](crate::SlidingWindowLog) (keyed or direct) | re-check | first to re-check | no |
//! | [`Registry`](crate::Registry), `dyn RateLimiter`, the blocking `RedisLimiter` (feature `redis`), a rule of your own (with `impl RechecksWhenWaiting for R {}`), any other [`RateLimiter`](crate::RateLimiter) (with `impl Acquire for L {}` or [`Waiter::acquire_retrying`]) | re-check | first to re-check | no |
//!
//! The async Redis limiters (features `redis` and `tokio`) check with
//! `.await`, so they are not [`RateLimiter`](crate::RateLimiter)s: they have
//! no blocking `acquire`, and wait by re-checking with their own
//! `AsyncRedisLimiter::acquire_async` (in `tollgate::redis`, unlinked here
//! because the module exists only with the feature).
//!
//! Reservations are token-bucket semantics: a bucket can owe tokens (its
//! state is a time, which can move past the tolerance), while a window
//! counter can only count the window it is in, so it has nowhere to record
//! units promised to a later window.
//!
//! # Fairness
//!
//! **Token buckets** serve waiters in the order their reservations land (one
//! CAS each). A reservation fixes its due time when it is made, and while
//! any waiter is queued the bucket is in debt, so no later request, waiting
//! or not, can pass before it: no waiter starves while tokens keep arriving,
//! and each is served within `cost / rate` of the one before it.
//!
//! **Re-checking limiters** promise no order: when units free up, whoever
//! checks first takes them, and a waiter that loses the race sleeps again
//! for the new hint. Under sustained overload a waiter can keep losing until
//! its timeout; [`Jitter`] spreads waiters that would wake at one instant.
//!
//! # Timeouts
//!
//! A wait fails at once, spending nothing, when the cost can never fit
//! ([`WaitError::Capacity`]) or when the wait it needs is longer than the
//! time left ([`WaitError::Timeout`]); it never sleeps just to fail. A wait
//! exactly as long as the timeout succeeds. A re-checking wait that loses a
//! race may still fail later, when the new wait no longer fits.
//!
//! # Cancellation
//!
//! A reservation of `n` tokens cancelled after its due time gives nothing
//! back: the tokens count as used. Before that, all `n` go back if the
//! bucket's state (its theoretical arrival time, `TAT`) is still the value
//! the reservation left, that is, nothing reserved or admitted after it
//! stands (what was, was cancelled first); otherwise nothing goes back. The
//! bucket never ends up fuller than full. Go's `x/time/rate` (`CancelAt`)
//! also gives back the part of an older reservation that no later one
//! relied on; that count needs a second word per key, and taken from `TAT`
//! instead it let out-of-order cancels admit more than the quota. The two
//! agree whenever reservations are cancelled newest first.
//!
//! Dropping an `acquire_async` future (feature `tokio`) before it
//! completes cancels its reservation; a re-checking async wait, the async
//! Redis limiters' included, holds nothing between checks, so there is
//! nothing to give back.

mod acquire;
#[cfg(feature = "tokio")]
mod acquire_async;
#[cfg(all(feature = "redis", feature = "tokio"))]
mod acquire_async_redis;
#[cfg(feature = "tokio")]
mod async_sleeper;
mod bucket_debt;
mod error;
mod jitter;
mod plan;
mod reservation;
mod sleeper;
mod waiter;

pub use acquire::{Acquire, RechecksWhenWaiting};
#[cfg(feature = "tokio")]
pub use async_sleeper::{AsyncSleeper, TokioSleeper};
pub use error::WaitError;
pub use jitter::Jitter;
pub use reservation::{Reservation, Reserve, Ticket};
pub use sleeper::{ManualSleeper, Sleeper, ThreadSleeper};
pub use waiter::Waiter;
