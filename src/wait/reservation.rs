//! [`Reservation`]: tokens taken now, to be used after a delay, that can be
//! given back until then; and [`Reserve`], the limiters that hand them out.

use std::borrow::Borrow;
use std::fmt;
use std::time::Duration;

use crate::limiter::RateLimiter;
use crate::wait::error::WaitError;

/// Limiters that can take units ahead of time: the token buckets
/// ([`TokenBucket`](crate::TokenBucket) and
/// `DirectLimiter<TokenBucketRule, _>`).
///
/// A reservation always takes its tokens, even from an empty bucket: the
/// bucket goes into debt, and the reservation says how long until its tokens
/// are due. Later requests see the debt, so they queue behind it. See the
/// [module docs](crate::wait) for the exact rules.
///
/// Only this crate's limiters create [`Reservation`]s and their [`Ticket`]s.
pub trait Reserve<Q: ?Sized + ToOwned = str>: RateLimiter<Q> {
    /// Takes `cost` tokens for `key` now, due no later than `max_wait` from
    /// now.
    ///
    /// Errors, changing nothing, when `cost` is above the bucket's capacity
    /// ([`WaitError::Capacity`]), when the tokens would be due later than
    /// `max_wait` ([`WaitError::Timeout`]), or when a new key cannot be
    /// tracked under the key cap ([`WaitError::KeyCapReached`]). A cost of 0
    /// takes nothing; its delay is how long until one token would pass.
    fn reserve_within(
        &self,
        key: &Q,
        cost: u64,
        max_wait: Duration,
    ) -> Result<Reservation<'_, Self, Q>, WaitError>;

    /// Takes `cost` tokens for `key` now, however long until they are due.
    fn reserve(&self, key: &Q, cost: u64) -> Result<Reservation<'_, Self, Q>, WaitError> {
        self.reserve_within(key, cost, Duration::MAX)
    }

    /// The reading of the clock that reservations are timed by.
    fn clock_nanos(&self) -> u64;

    /// Gives back what `ticket` may still return for `key`; what
    /// [`Reservation::cancel`] calls.
    fn give_back(&self, key: &Q, ticket: Ticket);
}

/// What one reservation took: only [`Reservation`]s hold one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket {
    /// Tokens taken.
    pub(crate) cost: u64,
    /// The bucket's theoretical arrival time right after the reservation.
    pub(crate) tat_after: u64,
    /// Clock nanoseconds from which the tokens may be used.
    pub(crate) ready_at: u64,
}

/// Tokens taken for one key, usable from [`ready_at_nanos`](Self::ready_at_nanos).
///
/// Dropping a reservation keeps the tokens spent; [`cancel`](Self::cancel)
/// gives them back if nothing reserved or admitted after them still stands.
///
/// ```
/// use std::time::Duration;
/// use tollgate::{ManualClock, Quota, TokenBucket};
/// use tollgate::wait::Reserve;
///
/// let clock = ManualClock::new();
/// let limiter: TokenBucket<String, _> = TokenBucket::with_clock(Quota::per_second(10).with_burst(2), clock);
/// let now = limiter.reserve("k", 2)?;
/// assert_eq!(now.delay(), Duration::ZERO);
/// let later = limiter.reserve("k", 2)?; // the bucket goes into debt
/// assert_eq!(later.delay(), Duration::from_millis(200));
/// later.cancel(); // nothing came after it: both tokens go back
/// assert_eq!(limiter.reserve("k", 1)?.delay(), Duration::from_millis(100));
/// # Ok::<(), tollgate::wait::WaitError>(())
/// ```
#[must_use = "the tokens are taken: use them after `delay()`, or `cancel()` to give them back"]
pub struct Reservation<'a, L: ?Sized, Q: ?Sized + ToOwned = str> {
    limiter: &'a L,
    key: Q::Owned,
    ticket: Ticket,
}

impl<'a, L: Reserve<Q> + ?Sized, Q: ?Sized + ToOwned> Reservation<'a, L, Q> {
    pub(crate) fn new(limiter: &'a L, key: Q::Owned, ticket: Ticket) -> Self {
        Reservation {
            limiter,
            key,
            ticket,
        }
    }

    /// Tokens taken.
    pub fn cost(&self) -> u64 {
        self.ticket.cost
    }

    /// The key the tokens were taken for.
    pub fn key(&self) -> &Q {
        self.key.borrow()
    }

    /// The limiter's clock reading from which the tokens may be used.
    pub fn ready_at_nanos(&self) -> u64 {
        self.ticket.ready_at
    }

    /// How long from now until the tokens may be used; zero once they may.
    pub fn delay(&self) -> Duration {
        Duration::from_nanos(self.delay_nanos())
    }

    /// [`delay`](Self::delay) in nanoseconds.
    pub fn delay_nanos(&self) -> u64 {
        self.ticket
            .ready_at
            .saturating_sub(self.limiter.clock_nanos())
    }

    /// Gives the tokens back if nothing reserved or admitted after them
    /// still stands (later reservations cancelled first, newest first, do
    /// not count); otherwise gives back nothing, stricter than Go's
    /// `CancelAt` (see the [module docs](crate::wait)).
    ///
    /// Past [`ready_at_nanos`](Self::ready_at_nanos) the tokens count as
    /// used and nothing is given back; the bucket never ends up fuller than
    /// full.
    pub fn cancel(self) {
        self.limiter.give_back(self.key.borrow(), self.ticket);
    }
}

impl<L: ?Sized, Q: ?Sized + ToOwned> fmt::Debug for Reservation<'_, L, Q>
where
    Q::Owned: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reservation")
            .field("key", &self.key)
            .field("cost", &self.ticket.cost)
            .field("ready_at_nanos", &self.ticket.ready_at)
            .finish_non_exhaustive()
    }
}
