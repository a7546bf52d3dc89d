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

/// Whether `tat` is saturated at [`MAX_TAT`]. A `TAT` clamped there may hold
/// less debt than was made, so such a bucket takes nothing more until the
/// clock ends: near the end of the clock's range a bucket that forgot the
/// debt would admit without limit. Plain decisions and reservations alike.
#[inline(always)]
pub(crate) fn is_saturated(tat: u64) -> bool {
    tat >= MAX_TAT
}

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
    /// `τ - T`: the most debt that still admits one token. Never negative:
    /// a quota's burst is at least one, so `τ ≥ T`.
    room_for_one: u64,
    /// `MAX_TAT - τ`, saturated: below it `now + τ` fits under `MAX_TAT`,
    /// so an admitted request's new `TAT` needs no clamp.
    clamp_from: u64,
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

    /// `τ - spend`: the most debt that still lets `cost` units through, or
    /// `None` when they exceed even a full bucket (with the product
    /// unsaturated, so a cost whose `spend` saturates at `τ = u64::MAX` is
    /// refused too). One unit and a peek read it precomputed.
    #[inline(always)]
    fn room(&self, cost: u64) -> Option<u64> {
        if cost <= 1 {
            return Some(self.room_for_one);
        }
        let spend = cost.checked_mul(self.interval.get())?;
        self.tolerance.checked_sub(spend)
    }

    /// Whether `spend` nanoseconds of tokens fit on top of `debt`: `Ok`
    /// with the debt after them, or `Err` with how long until they would.
    #[inline(always)]
    fn fit(&self, debt: u64, cost: u64, spend: u64) -> Result<u64, u64> {
        // The request passes when `debt + spend <= τ`, tested as `debt <=
        // τ - spend`: no sum that could overflow.
        match self.room(cost) {
            // At most τ: `debt <= τ - spend`.
            Some(room) if debt <= room => Ok(debt + spend),
            // `debt + spend - τ`, saturated.
            Some(room) => Err(debt - room),
            None => Err(debt.saturating_add(spend.saturating_sub(self.tolerance))),
        }
    }

    /// The latest old `TAT` that lets one unit through at `now`, when that
    /// one comparison decides: `None` for any other cost (a run-time cost
    /// would otherwise put a multiply back between the loaded word and the
    /// CAS) and for `now` at or past [`clamp_from`](Self::clamp_from).
    /// It depends only on `now` and `cost`, so the caller works it out once,
    /// before the CAS loop.
    #[inline(always)]
    fn latest_for_one(&self, now: u64, cost: u64) -> Option<u64> {
        // No overflow: `now < MAX_TAT - τ` and `τ - T <= τ`.
        (cost == 1 && now < self.clamp_from).then(|| now + self.room_for_one)
    }

    /// The nanoseconds of tokens `cost` units take: a peek is judged as one
    /// unit. At most τ for a cost within the capacity (callers check);
    /// saturated above it, and then refused by [`fit`](Self::fit).
    #[inline(always)]
    fn spend(&self, cost: u64) -> u64 {
        cost.max(1).saturating_mul(self.interval.get())
    }

    /// The `TAT` after an admission at `now` that leaves `after` of debt,
    /// clamped below the retired marker (the general path; the admitted
    /// path of [`step`](Self::step) needs no clamp); see [`is_saturated`].
    #[inline(always)]
    fn next_tat(&self, now: u64, after: u64) -> u64 {
        now.saturating_add(after).min(MAX_TAT)
    }

    /// The general path's verdict on `cost` at `now` against `tat`, as
    /// [`fit`](Self::fit) gives it, except that a saturated `TAT`
    /// ([`is_saturated`]) refuses everything.
    #[inline(always)]
    fn judge(&self, tat: u64, now: u64, cost: u64) -> Result<u64, u64> {
        if is_saturated(tat) {
            // Until the clock's last reading, at least 1 ns.
            return Err((u64::MAX - now).max(1));
        }
        self.fit(tat.saturating_sub(now), cost, self.spend(cost))
    }

    /// The pure decision: old `TAT`, time and cost in; answer and new `TAT`
    /// out. `latest` is [`latest_for_one(now, cost)`](Self::latest_for_one).
    // Always inlined: see `PackedWord::update`.
    #[inline(always)]
    fn step(&self, tat: u64, now: u64, cost: u64, latest: Option<u64>) -> Step {
        let (after, next) = match latest {
            // One unit admitted: `tat <= latest` is `debt <= τ - T`, and
            // with no clamp ahead the new `TAT` is a plain sum.
            Some(latest) if tat <= latest => {
                let next = tat.max(now) + self.interval.get();
                (next - now, next)
            }
            _ => {
                let debt = tat.saturating_sub(now);
                // Only refusals and peeks need it: the admitted path
                // divides once, below.
                let available = || self.interval.divide(self.tolerance.saturating_sub(debt));
                match self.judge(tat, now, cost) {
                    Err(retry) => {
                        return Step {
                            decision: Decision::reject(self.capacity, available(), retry, debt),
                            next: None,
                        };
                    }
                    Ok(_) if cost == 0 => {
                        return Step {
                            decision: Decision::admit(self.capacity, available(), debt),
                            next: None,
                        };
                    }
                    Ok(after) => (after, self.next_tat(now, after)),
                }
            }
        };
        let remaining = self.interval.divide(self.tolerance - after);
        Step {
            decision: Decision::admit(self.capacity, remaining, after),
            next: Some(next),
        }
    }

    /// [`step`](Self::step) without the figures: whether it passes.
    #[inline(always)]
    fn admit_step(&self, tat: u64, now: u64, cost: u64, latest: Option<u64>) -> Step<bool> {
        if let Some(latest) = latest {
            // As in `step`: one unit, one comparison, no clamp ahead.
            let passes = tat <= latest;
            return Step {
                decision: passes,
                next: passes.then(|| tat.max(now) + self.interval.get()),
            };
        }
        match self.judge(tat, now, cost) {
            Ok(after) if cost > 0 => Step {
                decision: true,
                next: Some(self.next_tat(now, after)),
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
            // `tolerance >= interval`: the burst is at least one.
            room_for_one: tolerance.saturating_sub(interval),
            clamp_from: MAX_TAT.saturating_sub(tolerance),
        }
    }

    #[inline]
    fn fresh(&self) -> PackedWord {
        PackedWord::new(0)
    }

    #[inline]
    fn limit(&self) -> u64 {
        self.capacity
    }

    // Always inlined: see `PackedWord::update`.
    #[inline(always)]
    fn check(&self, state: &PackedWord, now: u64, cost: u64) -> Option<Decision> {
        let latest = self.latest_for_one(now, cost);
        state.update(
            #[inline(always)]
            |tat| self.step(tat, now, cost, latest),
        )
    }

    // Always inlined: see `PackedWord::update`.
    #[inline(always)]
    fn admit(&self, state: &PackedWord, now: u64, cost: u64) -> Option<bool> {
        let latest = self.latest_for_one(now, cost);
        state.update(
            #[inline(always)]
            |tat| self.admit_step(tat, now, cost, latest),
        )
    }

    #[inline]
    fn is_fresh(&self, state: &PackedWord, now: u64) -> bool {
        state.load() <= now
    }

    fn reset_bound_nanos(&self) -> u64 {
        self.tolerance
    }
}

#[cfg(all(test, not(tollgate_loom)))]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Rules at the edges: one token, a huge burst whose `τ` saturates at
    /// 2^62, an interval above 2^62, and an ordinary quota.
    fn rules() -> Vec<TokenBucketRule> {
        let second = Duration::from_secs(1);
        let ages = Duration::from_nanos(u64::MAX);
        [
            Quota::per_second(10).with_burst(1),
            Quota::per_second(10).with_burst(5),
            Quota::new(1, second).unwrap().with_burst(u64::MAX),
            Quota::new(1, ages).unwrap(),
            Quota::new(3, ages).unwrap().with_burst(2),
        ]
        .iter()
        .map(TokenBucketRule::from_quota)
        .collect()
    }

    /// Times and `TAT`s around every boundary the two paths split on.
    fn points(rule: &TokenBucketRule) -> Vec<u64> {
        let mut points = vec![0, 1, 1_000, MAX_TAT - 1, MAX_TAT, u64::MAX - 1];
        for edge in [rule.clamp_from, rule.tolerance, rule.room_for_one] {
            points.extend([edge.saturating_sub(1), edge, edge.saturating_add(1)]);
        }
        points
    }

    /// Whether `cost` passes on `tat` at `now`, and the new `TAT`, in
    /// 128-bit arithmetic with no shortcut; a `TAT` saturated at `MAX_TAT`
    /// lets nothing through.
    fn reference(rule: &TokenBucketRule, tat: u64, now: u64, cost: u64) -> (bool, Option<u64>) {
        let spend = u128::from(cost.max(1)) * u128::from(rule.interval_nanos());
        let debt = u128::from(tat.saturating_sub(now));
        let passes = tat < MAX_TAT && debt + spend <= u128::from(rule.tolerance);
        let next = u128::from(tat.max(now)) + spend;
        let next = (passes && cost > 0).then(|| next.min(u128::from(MAX_TAT)) as u64);
        (passes, next)
    }

    /// The one-comparison path must decide as the general path and as the
    /// reference does, for every rule, time, `TAT` and cost at the edges.
    #[test]
    fn the_admitted_path_agrees_with_the_general_one() {
        for rule in rules() {
            let points = points(&rule);
            let costs = [0, 1, 2, rule.capacity, rule.capacity + 1, u64::MAX];
            for &now in &points {
                let latest_for_one = now.saturating_add(rule.room_for_one);
                let around = [latest_for_one, latest_for_one.saturating_add(1)];
                for &tat in points.iter().chain(&around) {
                    for cost in costs {
                        let latest = rule.latest_for_one(now, cost);
                        let fast = rule.step(tat, now, cost, latest);
                        let general = rule.step(tat, now, cost, None);
                        let context = format!("{rule:?} tat {tat} now {now} cost {cost}");
                        assert_eq!(fast.decision, general.decision, "{context}");
                        assert_eq!(fast.next, general.next, "{context}");
                        let (passes, next) = reference(&rule, tat, now, cost);
                        assert_eq!(general.decision.allowed(), passes, "{context}");
                        assert_eq!(general.next, next, "{context}");
                        for admit in [
                            rule.admit_step(tat, now, cost, latest),
                            rule.admit_step(tat, now, cost, None),
                        ] {
                            assert_eq!((admit.decision, admit.next), (passes, next), "{context}");
                        }
                    }
                }
            }
        }
    }
}
