//! The [`Algorithm`] trait: one rate-limiting rule applied to one key's state.
//!
//! A rule is a pure function of the key's old state, the current time and the
//! cost; the state type decides how that function is applied atomically
//! ([`PackedWord`](crate::PackedWord)'s CAS loop, or a short lock for the
//! sliding log). Keeping the rule apart from the map lets the same code run
//! behind [`KeyedLimiter`](crate::KeyedLimiter), behind a single-key
//! [`DirectLimiter`](crate::DirectLimiter), and inside `loom` models.

use crate::decision::Decision;
use crate::quota::Quota;
use crate::retire::Retire;

/// A rate-limiting rule over a per-key state.
///
/// A rule written outside the crate gets keys, bounded memory and the
/// [`RateLimiter`](crate::RateLimiter) trait through
/// [`KeyedLimiter`](crate::KeyedLimiter) and
/// [`DirectLimiter`](crate::DirectLimiter); an empty
/// `impl` of [`RechecksWhenWaiting`](crate::wait::RechecksWhenWaiting) lets
/// them [wait](crate::wait::Acquire) too.
pub trait Algorithm: Send + Sync + 'static {
    /// One key's state; the keyed store retires it to drop or move it.
    type State: Retire + Send + Sync + 'static;

    /// The rule for `quota`.
    fn from_quota(quota: &Quota) -> Self;

    /// The state of a key never seen before.
    fn fresh(&self) -> Self::State;

    /// The limit reported in every [`Decision`].
    fn limit(&self) -> u64;

    /// The most units one call can ever spend; larger costs are errors.
    /// The [`limit`](Self::limit) unless a rule says otherwise: every rule
    /// of this crate keeps the default.
    #[inline]
    fn max_cost(&self) -> u64 {
        self.limit()
    }

    /// Decides a request of `cost` units at `now` and applies it atomically.
    ///
    /// Callers guarantee `cost <= self.max_cost()`. `cost == 0` is a peek.
    /// A denied request leaves the state unchanged. `None`, with nothing
    /// changed, when the state is retired ([`Retire`]): the caller looks the
    /// key up again.
    fn check(&self, state: &Self::State, now: u64, cost: u64) -> Option<Decision>;

    /// [`check`](Self::check) answering only whether the request passed:
    /// the path of [`allow`](crate::RateLimiter::allow), which needs none of
    /// the figures. Rules override it when skipping them saves work; it
    /// must admit exactly when `check` would.
    #[inline]
    fn admit(&self, state: &Self::State, now: u64, cost: u64) -> Option<bool> {
        self.check(state, now, cost)
            .map(|decision| decision.allowed())
    }

    /// Whether `state` behaves exactly like [`fresh`](Self::fresh) from `now`
    /// on, so the key can be dropped without changing any later decision.
    fn is_fresh(&self, state: &Self::State, now: u64) -> bool;

    /// An upper bound on how long a key takes to return to fresh when left
    /// alone (used as the retry hint when a key cannot be tracked).
    fn reset_bound_nanos(&self) -> u64;
}

/// The answer when there is no state to judge (a key the cap refused, or a
/// state a custom rule reports retired where none can be): no unit passes,
/// and the retry hint is the rule's reset bound.
pub(crate) fn refusal<A: Algorithm>(rule: &A) -> Decision {
    let wait = rule.reset_bound_nanos();
    Decision::reject(rule.limit(), 0, wait, wait)
}
