//! [`DirectLimiter`]: one rule and one state, with no map in front.

use std::fmt;

use crossbeam_utils::CachePadded;

use crate::algorithm::{Algorithm, refusal};
use crate::clock::{Clock, MonotonicClock};
use crate::decision::Decision;
use crate::error::InsufficientCapacity;
use crate::limiter::RateLimiter;
use crate::quota::Quota;

/// A limiter for a single key (a whole service, one upstream, one socket).
///
/// It is the per-key cell of a [`KeyedLimiter`](crate::KeyedLimiter)
/// without the map: the same rule, the same state, the same CAS loop. It
/// implements [`RateLimiter<()>`](RateLimiter), or use
/// [`check_n`](Self::check_n) directly.
///
/// ```
/// use tollgate::{DirectLimiter, ManualClock, Quota, TokenBucketRule};
///
/// let limiter = DirectLimiter::<TokenBucketRule, _>::with_clock(Quota::per_second(1), ManualClock::new());
/// assert!(limiter.check_n(1)?.allowed());
/// assert!(!limiter.check_n(1)?.allowed());
/// # Ok::<(), tollgate::InsufficientCapacity>(())
/// ```
///
/// The limiter takes whole cache lines of its own (it is aligned to
/// `crossbeam_utils::CachePadded`'s boundary, 128 bytes on `x86_64`), so a
/// counter that a caller keeps beside it and other threads write cannot
/// share a line with its state or rule: measured, such a neighbour made
/// each decision about six times dearer (`docs/benchmarks.md`, levers).
pub struct DirectLimiter<A: Algorithm, C = MonotonicClock> {
    rule: A,
    state: A::State,
    clock: C,
    /// No bytes; aligns the limiter so that it fills whole lines.
    _own_lines: CachePadded<()>,
}

impl<A: Algorithm> DirectLimiter<A, MonotonicClock> {
    /// A limiter for `quota` on the default [`MonotonicClock`].
    pub fn new(quota: Quota) -> Self {
        Self::with_clock(quota, MonotonicClock::new())
    }
}

impl<A: Algorithm, C: Clock> DirectLimiter<A, C> {
    /// A limiter for `quota` reading time from `clock`.
    pub fn with_clock(quota: Quota, clock: C) -> Self {
        let rule = A::from_quota(&quota);
        let state = rule.fresh();
        DirectLimiter {
            rule,
            state,
            clock,
            _own_lines: CachePadded::new(()),
        }
    }

    /// Spends `cost` units if available; see [`RateLimiter::check_n`].
    // Always inlined: see `PackedWord::update`.
    #[inline(always)]
    pub fn check_n(&self, cost: u64) -> Result<Decision, InsufficientCapacity> {
        InsufficientCapacity::check(cost, self.rule.max_cost())?;
        let now = self.clock.now_nanos();
        // Only the keyed store retires states; a custom rule that reports
        // its own state retired gets a refusal rather than a panic.
        Ok(self
            .rule
            .check(&self.state, now, cost)
            .unwrap_or_else(|| refusal(&self.rule)))
    }

    /// Whether a request of `cost` units passes (spending them if so); like
    /// [`check_n`](Self::check_n) without the figures, and `false` for a
    /// cost that could never fit.
    // Always inlined: see `PackedWord::update`.
    #[inline(always)]
    #[must_use = "the units are spent if allowed: act on the answer"]
    pub fn allow_n(&self, cost: u64) -> bool {
        if cost > self.rule.max_cost() {
            return false;
        }
        let now = self.clock.now_nanos();
        // A custom rule that reports its own state retired gets a refusal.
        self.rule.admit(&self.state, now, cost).unwrap_or(false)
    }

    /// Whether one request passes (spending it if so).
    #[inline(always)]
    #[must_use = "the unit is spent if allowed: act on the answer"]
    pub fn allow(&self) -> bool {
        self.allow_n(1)
    }

    /// Whether the state equals a fresh one now.
    pub fn is_fresh(&self) -> bool {
        self.rule.is_fresh(&self.state, self.clock.now_nanos())
    }

    /// The state (for reservations in `crate::wait`).
    pub(crate) fn state(&self) -> &A::State {
        &self.state
    }

    /// The rule applied.
    pub fn rule(&self) -> &A {
        &self.rule
    }

    /// The clock decisions are timed by.
    pub fn clock(&self) -> &C {
        &self.clock
    }
}

impl<A: Algorithm, C: Clock> RateLimiter<()> for DirectLimiter<A, C> {
    #[inline]
    fn check_n(&self, _key: &(), cost: u64) -> Result<Decision, InsufficientCapacity> {
        DirectLimiter::check_n(self, cost)
    }

    #[inline]
    fn allow(&self, _key: &()) -> bool {
        DirectLimiter::allow(self)
    }

    #[inline]
    fn allow_n(&self, _key: &(), cost: u64) -> bool {
        DirectLimiter::allow_n(self, cost)
    }
}

impl<A: Algorithm + fmt::Debug, C> fmt::Debug for DirectLimiter<A, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DirectLimiter")
            .field("rule", &self.rule)
            .finish_non_exhaustive()
    }
}
