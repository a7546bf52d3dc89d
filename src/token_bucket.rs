//! Token bucket, encoded as GCRA: one theoretical arrival time per key.
//!
//! A bucket of capacity `B` refilling one token every `T` nanoseconds is the
//! same thing as the generic cell rate algorithm with emission interval `T`
//! and tolerance `τ = B·T`: instead of storing "tokens and last refill", the
//! state is the time `TAT` at which the bucket will be full again. At `now`
//! the bucket is `debt = max(TAT - now, 0)` nanoseconds short of full, holds
//! `⌊(τ - debt) / T⌋` whole tokens, and a request of `n` tokens passes when
//! `debt + n·T ≤ τ`, moving `TAT` to `now + debt + n·T`. Refill is lazy and
//! continuous, with no background thread.
//!
//! # Packed word
//!
//! | bits   | field | meaning                                              |
//! |--------|-------|------------------------------------------------------|
//! | 63..0  | `TAT` | clock nanoseconds at which the bucket is full again  |
//!
//! A fresh key is `TAT = 0`: full at any `now`. A key with `TAT ≤ now` is
//! full and carries no information, so it may be evicted. `TAT` saturates
//! at `2^64 - 2`: all ones is [`PackedWord::RETIRED`].
//!
//! # Rounding and saturation
//!
//! `T = ⌈window / limit⌉` whole nanoseconds (at least 1), so the bucket never
//! refills faster than the quota; the relative error is below `1 / T` (under
//! 0.1 % for any rate up to a million per second). `τ` saturates at 2^62 ns
//! (about 146 years); the reported [`limit`](crate::Decision::limit) is the
//! capacity actually enforced, `⌊τ / T⌋`.

use crate::algorithm::Algorithm;
use crate::clock::MonotonicClock;
use crate::decision::Decision;
use crate::divisor::Divisor;
use crate::keyed::KeyedLimiter;
use crate::packed_word::{PackedWord, Step};
use crate::quota::Quota;

/// The largest tolerance kept, so `now + τ` stays far from `u64::MAX`.
const MAX_TOLERANCE_NANOS: u64 = 1 << 62;

/// The latest `TAT` stored: one below the retired marker.
pub(crate) const MAX_TAT: u64 = PackedWord::RETIRED - 1;

/// A keyed token bucket: capacity `quota.burst()`, refilling
/// `quota.limit()` tokens per `quota.window()`; starts full.
///
/// ```
/// use tollgate::{ManualClock, Quota, RateLimiter, TokenBucket};
///
/// let clock = ManualClock::new();
/// let limiter: TokenBucket<String, _> = TokenBucket::with_clock(Quota::per_second(2), clock.clone());
/// assert!(limiter.allow("alice"));
/// assert!(limiter.allow("alice"));
/// assert!(!limiter.allow("alice"));
/// clock.advance(std::time::Duration::from_millis(500)); // one token refilled
/// assert!(limiter.allow("alice"));
/// ```
pub type TokenBucket<K = String, C = MonotonicClock> = KeyedLimiter<TokenBucketRule, K, C>;

/// The token bucket rule (GCRA); see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenBucketRule {
    /// `T`: nanoseconds per token, divided by on every decision.
    interval: Divisor,
    /// `τ`: nanoseconds from empty to full.
    tolerance: u64,
    /// `⌊τ / T⌋`: tokens in a full bucket.
    capacity: u64,
}

impl TokenBucketRule {
    /// Nanoseconds between two refilled tokens.
    pub fn interval_nanos(&self) -> u64 {
        self.interval.get()
    }

    /// Tokens in a full bucket.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// `τ`: nanoseconds from empty to full (for reservations in `crate::wait`).
    pub(crate) fn tolerance_nanos(&self) -> u64 {
        self.tolerance
    }

    /// Whether `spend` nanoseconds of tokens fit on top of `debt`: `Ok`
    /// with the debt after them, or `Err` with how long until they would.
    #[inline(always)]
    fn fit(&self, debt: u64, spend: u64) -> Result<u64, u64> {
        // The request passes when `debt + spend <= τ`, tested as `debt <=
        // τ - spend`: no sum that could overflow, and `τ - spend` does not
        // depend on the state, so it stays out of the CAS loop.
        match self.tolerance.checked_sub(spend) {
            // At most τ: `debt <= τ - spend`.
            Some(room) if debt <= room => Ok(debt + spend),
            // `debt + spend - τ`, saturated.
            Some(room) => Err(debt - room),
            None => Err(debt.saturating_add(spend - self.tolerance)),
        }
    }

    /// The nanoseconds of tokens `cost` units take: a peek is judged as one
    /// unit. At most τ for a cost within the capacity (callers check);
    /// saturated above it, and then refused by [`fit`](Self::fit).
    #[inline(always)]
    fn spend(&self, cost: u64) -> u64 {
        cost.max(1).saturating_mul(self.interval.get())
    }

    /// The `TAT` after admitting `spend` at `now`, `after` being the debt
    /// [`fit`](Self::fit) returned.
    #[inline(always)]
    fn next_tat(&self, tat: u64, now: u64, spend: u64, after: u64) -> u64 {
        // `now + after` is `max(tat, now) + spend`; while `now + τ` stays
        // below `MAX_TAT` that sum needs no clamp, which keeps the path from
        // the loaded word to the CAS three instructions long.
        if now < MAX_TAT.saturating_sub(self.tolerance) {
            tat.max(now) + spend
        } else {
            now.saturating_add(after).min(MAX_TAT)
        }
    }

    /// The pure decision: old `TAT`, time and cost in; answer and new `TAT` out.
    // Always inlined: see `PackedWord::update`.
    #[inline(always)]
    fn step(&self, tat: u64, now: u64, cost: u64) -> Step {
        let debt = tat.saturating_sub(now);
        // Only refusals and peeks need it: the admitted path divides once.
        let available = || self.interval.divide(self.tolerance.saturating_sub(debt));
        let spend = self.spend(cost);
        let after = match self.fit(debt, spend) {
            Ok(after) => after,
            Err(retry) => {
                return Step {
                    decision: Decision::reject(self.capacity, available(), retry, debt),
                    next: None,
                };
            }
        };
        if cost == 0 {
            return Step {
                decision: Decision::admit(self.capacity, available(), debt),
                next: None,
            };
        }
        let remaining = self.interval.divide(self.tolerance - after);
        Step {
            decision: Decision::admit(self.capacity, remaining, after),
            next: Some(self.next_tat(tat, now, spend, after)),
        }
    }

    /// [`step`](Self::step) without the figures: whether it passes.
    #[inline(always)]
    fn admit_step(&self, tat: u64, now: u64, cost: u64) -> Step<bool> {
        let debt = tat.saturating_sub(now);
        let spend = self.spend(cost);
        match self.fit(debt, spend) {
            Ok(after) if cost > 0 => Step {
                decision: true,
                next: Some(self.next_tat(tat, now, spend, after)),
            },
            verdict => Step {
                decision: verdict.is_ok(),
                next: None,
            },
        }
    }
}

impl Algorithm for TokenBucketRule {
    type State = PackedWord;

    fn from_quota(quota: &Quota) -> Self {
        let interval = quota.window_nanos().div_ceil(quota.limit()).max(1);
        let full = u128::from(quota.burst()) * u128::from(interval);
        let ceiling = u128::from(MAX_TOLERANCE_NANOS.max(interval));
        // Fits: `ceiling` is a u64.
        let tolerance = u64::try_from(full.min(ceiling)).unwrap_or(u64::MAX);
        TokenBucketRule {
            interval: Divisor::new(interval),
            tolerance,
            capacity: tolerance / interval,
        }
    }

    #[inline]
    fn fresh(&self) -> PackedWord {
        PackedWord::new(0)
    }

    #[inline]
    fn max_cost(&self) -> u64 {
        self.capacity
    }

    #[inline]
    fn limit(&self) -> u64 {
        self.capacity
    }

    // Always inlined: see `PackedWord::update`.
    #[inline(always)]
    fn check(&self, state: &PackedWord, now: u64, cost: u64) -> Option<Decision> {
        state.update(|tat| self.step(tat, now, cost))
    }

    // Always inlined: see `PackedWord::update`.
    #[inline(always)]
    fn admit(&self, state: &PackedWord, now: u64, cost: u64) -> Option<bool> {
        state.update(|tat| self.admit_step(tat, now, cost))
    }

    #[inline]
    fn is_fresh(&self, state: &PackedWord, now: u64) -> bool {
        state.load() <= now
    }

    fn reset_bound_nanos(&self) -> u64 {
        self.tolerance
    }
}
