//! Reservations on the token bucket's GCRA word, after the semantics of Go's
//! `x/time/rate` (`ReserveN`; `CancelAt`, stricter as below).
//!
//! The word is the theoretical arrival time `TAT` (see
//! [`token_bucket`](crate::TokenBucket)); with `T` the interval and `τ` the
//! tolerance, a bucket at `now` is `debt = max(TAT - now, 0)` short of full.
//! Reservations reuse that word unchanged: nothing new is stored.
//!
//! * **Reserve `n`.** `after = debt + n·T`; the tokens are due after
//!   `wait = max(after - τ, 0)`. If `wait` is within the caller's limit, `TAT`
//!   becomes `now + after`, which may lie beyond `now + τ`: that excess is
//!   debt that only time pays off, so plain checks fail until it is.
//! * **Cancel.** Nothing once a reservation is past due. Before that, its
//!   `n` tokens go back, by moving `TAT` `n·T` earlier but never below `now`
//!   (never fuller than full), only if `TAT` is still the value it left,
//!   `TAT_r`: nothing reserved or admitted after it stands (what was, was
//!   itself cancelled, newest first). Otherwise nothing goes back.
//!
//! Go's `CancelAt` also gives back the part of an older reservation that no
//! later one relied on, counting from the latest reservation's due time, a
//! second word this state does not have. Counted from `TAT` instead, as this
//! module once did, that part is too large after a newer reservation with
//! another behind it was cancelled first: `TAT` had already moved back for
//! the newer one's tokens, the one behind it kept its due time, and the
//! bucket admitted more than its quota (11 units in 500 ms at 10 per second,
//! burst 5). So a cancel here gives back all or nothing: the same as Go when
//! reservations are cancelled newest first, stricter otherwise.

use crate::key::Key;
use std::borrow::Borrow;
use std::time::Duration;

use crate::clock::{Clock, duration_to_nanos};
use crate::direct::DirectLimiter;
use crate::error::InsufficientCapacity;
use crate::keyed::KeyedLimiter;
use crate::packed_word::{PackedWord, Step};
use crate::token_bucket::{MAX_TAT, TokenBucketRule, is_saturated};
use crate::wait::error::WaitError;
use crate::wait::reservation::{Reservation, Reserve, Ticket};

/// The pure reservation step: old `TAT` in; new `TAT` (if any) and the
/// ticket out. `cost <= capacity`. The ticket is the whole answer, so the
/// step carries no [`Decision`](crate::Decision).
fn reserve_step(
    rule: &TokenBucketRule,
    tat: u64,
    now: u64,
    cost: u64,
    max_wait: u64,
) -> (Step<()>, Result<Ticket, WaitError>) {
    let (interval, tolerance) = (rule.interval_nanos(), rule.tolerance_nanos());
    let debt = tat.saturating_sub(now);
    // A peek is judged as one token; cost <= capacity, so the product <= τ.
    let spend = cost.max(1) * interval;
    let timeout = |needed: u64| WaitError::Timeout {
        needed: Duration::from_nanos(needed),
        left: Duration::from_nanos(max_wait),
    };
    let unchanged = Step {
        decision: (),
        next: None,
    };
    if is_saturated(tat) {
        return (unchanged, Err(timeout(u64::MAX)));
    }
    let Some(after) = debt.checked_add(spend) else {
        return (unchanged, Err(timeout(u64::MAX)));
    };
    let wait = after.saturating_sub(tolerance);
    if wait > max_wait {
        return (unchanged, Err(timeout(wait)));
    }
    // Saturated one below the retired marker, as in the plain step.
    let Some(next_tat) = now.checked_add(after).map(|tat| tat.min(MAX_TAT)) else {
        return (unchanged, Err(timeout(u64::MAX)));
    };
    // ready_at <= next_tat, so it fits too.
    let ready_at = now + wait;
    if cost == 0 {
        let ticket = Ticket {
            cost: 0,
            tat_after: tat,
            ready_at,
        };
        return (unchanged, Ok(ticket));
    }
    let step = Step {
        decision: (),
        next: Some(next_tat),
    };
    let ticket = Ticket {
        cost,
        tat_after: next_tat,
        ready_at,
    };
    (step, Ok(ticket))
}

/// The pure cancel step: the new `TAT`, or `None` when nothing goes back.
/// Only a reservation whose `TAT` still stands gives its tokens back (the
/// module docs say why).
fn cancel_step(rule: &TokenBucketRule, tat: u64, now: u64, ticket: &Ticket) -> Option<u64> {
    if ticket.cost == 0 || now > ticket.ready_at || tat != ticket.tat_after {
        return None;
    }
    let debt = tat.saturating_sub(now);
    if debt == 0 {
        return None;
    }
    // cost <= capacity, so the product <= τ.
    Some(now + debt.saturating_sub(ticket.cost * rule.interval_nanos()))
}

/// Applies [`reserve_step`] to `word` atomically; `None` if it is retired.
fn reserve_on(
    rule: &TokenBucketRule,
    word: &PackedWord,
    now: u64,
    cost: u64,
    max_wait: u64,
) -> Option<Result<Ticket, WaitError>> {
    let mut outcome = Err(WaitError::KeyCapReached);
    word.update(|tat| {
        // The closure runs once per CAS attempt; the last run is the one
        // whose step was stored, so its ticket is the one to keep.
        let (step, ticket) = reserve_step(rule, tat, now, cost, max_wait);
        outcome = ticket;
        step
    })?;
    Some(outcome)
}

/// Applies [`cancel_step`] to `word` atomically; `None` if it is retired.
fn cancel_on(rule: &TokenBucketRule, word: &PackedWord, now: u64, ticket: &Ticket) -> Option<()> {
    word.update(|tat| Step {
        decision: (),
        next: cancel_step(rule, tat, now, ticket),
    })
}

impl<K, C, Q> Reserve<Q> for KeyedLimiter<TokenBucketRule, K, C>
where
    K: Key,
    C: Clock,
    Q: Borrow<K::Lookup> + ToOwned + ?Sized,
{
    fn reserve_within(
        &self,
        key: &Q,
        cost: u64,
        max_wait: Duration,
    ) -> Result<Reservation<'_, Self, Q>, WaitError> {
        let rule = self.rule();
        InsufficientCapacity::check(cost, rule.capacity())?;
        let max_wait = duration_to_nanos(max_wait);
        // A peek must not start tracking the key.
        let outcome = self.with_state(key.borrow(), cost > 0, |word, now| {
            reserve_on(rule, word, now, cost, max_wait)
        });
        let ticket = match outcome {
            Some(ticket) => ticket?,
            // An untracked key is a full bucket: one token passes now.
            None if cost == 0 => {
                let now = self.clock().now_nanos();
                Ticket {
                    cost: 0,
                    tat_after: now,
                    ready_at: now,
                }
            }
            None => return Err(WaitError::KeyCapReached),
        };
        Ok(Reservation::new(self, key.to_owned(), ticket))
    }

    fn clock_nanos(&self) -> u64 {
        self.clock().now_nanos()
    }

    fn give_back(&self, key: &Q, ticket: Ticket) {
        // An untracked key is a full bucket: there is nothing to give back to.
        let _ = self.with_state(key.borrow(), false, |word, now| {
            cancel_on(self.rule(), word, now, &ticket)
        });
    }
}

impl<C: Clock> Reserve<()> for DirectLimiter<TokenBucketRule, C> {
    fn reserve_within(
        &self,
        _key: &(),
        cost: u64,
        max_wait: Duration,
    ) -> Result<Reservation<'_, Self, ()>, WaitError> {
        let rule = self.rule();
        InsufficientCapacity::check(cost, rule.capacity())?;
        let now = self.clock().now_nanos();
        // A direct limiter's state is never retired.
        let ticket = reserve_on(rule, self.state(), now, cost, duration_to_nanos(max_wait))
            .unwrap_or(Err(WaitError::KeyCapReached))?;
        Ok(Reservation::new(self, (), ticket))
    }

    fn clock_nanos(&self) -> u64 {
        self.clock().now_nanos()
    }

    fn give_back(&self, _key: &(), ticket: Ticket) {
        let now = self.clock().now_nanos();
        // A direct limiter's state is never retired, so this always applies.
        let _ = cancel_on(self.rule(), self.state(), now, &ticket);
    }
}

#[cfg(all(test, not(tollgate_loom)))]
mod tests {
    use super::*;
    use crate::algorithm::Algorithm;
    use crate::quota::Quota;

    const MS: u64 = 1_000_000;

    /// 10 per second, burst 2: T = 100 ms, τ = 200 ms.
    fn rule() -> TokenBucketRule {
        TokenBucketRule::from_quota(&Quota::per_second(10).with_burst(2))
    }

    #[test]
    fn reserving_beyond_the_tolerance_goes_into_debt() {
        let (step, ticket) = reserve_step(&rule(), 200 * MS, 0, 2, u64::MAX);
        assert_eq!(step.next, Some(400 * MS));
        let ticket = ticket.unwrap();
        assert_eq!((ticket.ready_at, ticket.tat_after), (200 * MS, 400 * MS));
    }

    #[test]
    fn a_wait_over_the_limit_changes_nothing() {
        let (step, ticket) = reserve_step(&rule(), 200 * MS, 0, 2, 200 * MS - 1);
        assert_eq!(step.next, None);
        assert_eq!(
            ticket,
            Err(WaitError::Timeout {
                needed: Duration::from_millis(200),
                left: Duration::from_nanos(200 * MS - 1),
            })
        );
    }

    #[test]
    fn an_overflowing_debt_is_a_timeout_not_a_wrap() {
        let (step, ticket) = reserve_step(&rule(), u64::MAX, 5, 1, u64::MAX);
        assert_eq!(step.next, None);
        assert!(matches!(ticket, Err(WaitError::Timeout { .. })));
    }

    /// Near the end of the clock a reservation may saturate the `TAT`
    /// (drop debt); after that nothing more is reserved, however long the
    /// caller would wait. A 1-ns interval is what lets the new `TAT` land
    /// exactly one past `MAX_TAT` again and again.
    #[test]
    fn a_saturated_tat_reserves_nothing_more() {
        let rule = TokenBucketRule::from_quota(&Quota::per_second(1_000_000_000).with_burst(4));
        let now = u64::MAX - 4;
        let (step, ticket) = reserve_step(&rule, now, now, 4, u64::MAX);
        assert_eq!(step.next, Some(MAX_TAT), "the debt is clamped");
        assert!(ticket.is_ok());
        for later in [now, MAX_TAT - 1, MAX_TAT] {
            let (step, ticket) = reserve_step(&rule, MAX_TAT, later, 1, u64::MAX);
            assert_eq!(step.next, None, "{later}");
            assert!(matches!(ticket, Err(WaitError::Timeout { .. })), "{later}");
        }
    }

    #[test]
    fn cancel_never_fills_past_full() {
        let ticket = Ticket {
            cost: 2,
            tat_after: 300 * MS,
            ready_at: 100 * MS,
        };
        // 2 tokens back from a debt of 200 ms: the bucket is just full.
        assert_eq!(
            cancel_step(&rule(), 300 * MS, 100 * MS, &ticket),
            Some(100 * MS)
        );
        // `TAT` moved from the value it left: nothing goes back.
        assert_eq!(cancel_step(&rule(), 150 * MS, 100 * MS, &ticket), None);
        assert_eq!(cancel_step(&rule(), 400 * MS, 100 * MS, &ticket), None);
        // Already full: nothing to store.
        assert_eq!(cancel_step(&rule(), 50 * MS, 100 * MS, &ticket), None);
    }
}
