//! [`KeyedLimiter`]: one rule applied to many keys, each with its own state.

use std::borrow::Borrow;
use std::fmt;

use crate::algorithm::{Algorithm, refusal};
use crate::clock::{Clock, MonotonicClock};
use crate::decision::Decision;
use crate::error::InsufficientCapacity;
use crate::key::Key;
use crate::limiter::RateLimiter;
use crate::options::KeyedOptions;
use crate::quota::Quota;
use crate::store::{Inserted, Store};

/// A rate limiter serving many keys with algorithm `A`.
///
/// Use it through the aliases [`TokenBucket`](crate::TokenBucket),
/// [`FixedWindow`](crate::FixedWindow),
/// [`SlidingWindowLog`](crate::SlidingWindowLog) and
/// [`SlidingWindowCounter`](crate::SlidingWindowCounter). A key is looked up
/// without a lock or any shared write, and its state updated lock-free (or
/// under its own short lock for the sliding log); new keys take the slow
/// path, which inserts under a shard lock. Keys are kept in their
/// [`Key::Stored`] form (short strings inline), made once when a key is
/// first tracked, and cloned when a shard that other threads still read
/// moves its states to a larger or smaller table.
pub struct KeyedLimiter<A: Algorithm, K: Key = String, C = MonotonicClock> {
    rule: A,
    quota: Quota,
    clock: C,
    store: Store<K, A::State>,
}

impl<A: Algorithm, K: Key> KeyedLimiter<A, K, MonotonicClock> {
    /// A limiter for `quota` on the default [`MonotonicClock`].
    pub fn new(quota: Quota) -> Self {
        Self::with_clock(quota, MonotonicClock::new())
    }
}

impl<A: Algorithm, K: Key, C: Clock> KeyedLimiter<A, K, C> {
    /// A limiter for `quota` reading time from `clock`.
    pub fn with_clock(quota: Quota, clock: C) -> Self {
        Self::with_options(quota, clock, KeyedOptions::default())
    }

    /// A limiter for `quota` on `clock` with memory `options`.
    pub fn with_options(quota: Quota, clock: C, options: KeyedOptions) -> Self {
        let rule = A::from_quota(&quota);
        let grace = rule.reset_bound_nanos();
        KeyedLimiter {
            rule,
            quota,
            clock,
            store: Store::new(options, grace),
        }
    }

    /// Keys tracked now.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// Whether no key is tracked.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every key whose state equals a fresh key's (full bucket, expired
    /// window); returns how many. Later decisions are unchanged by it.
    pub fn evict_idle(&self) -> usize {
        let now = self.clock.now_nanos();
        self.store
            .sweep(now, |state, now| self.rule.is_fresh(state, now))
    }

    /// Folds every table's hash now, as a limiter whose keys crowd does
    /// (`src/placement.rs`). For loom models only: their two-slot tables
    /// never crowd.
    #[cfg(tollgate_loom)]
    #[doc(hidden)]
    pub fn switch_to_folding(&self) {
        self.store.switch_to_folding();
    }

    /// The quota this limiter enforces.
    pub fn quota(&self) -> Quota {
        self.quota
    }

    /// The rule applied to each key.
    pub fn rule(&self) -> &A {
        &self.rule
    }

    /// The clock decisions are timed by.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// Runs `f` on `key`'s state and one clock reading, tracking the key
    /// first when `track` is set; `None` when the key is not tracked (and
    /// `track` is off, or the key cap refused it). `f` returns `None` when it
    /// finds the state retired, and is then run again on the live one. For
    /// reservations in `crate::wait`, which need more than a [`Decision`].
    pub(crate) fn with_state<R>(
        &self,
        key: &K::Lookup,
        track: bool,
        f: impl Fn(&A::State, u64) -> Option<R>,
    ) -> Option<R> {
        let now = self.clock.now_nanos();
        if let Some(result) = self.store.read(key, |state| f(state, now)) {
            return Some(result);
        }
        // Under the shard lock no state is retired, so `f` answers there.
        if !track {
            return self.store.read_locked(key, now, &f).flatten();
        }
        self.track_and(key, now, f).flatten()
    }

    /// Runs `f` on `key`'s state under its shard lock, tracking the key
    /// first unless the key cap refuses it; at the time the store judges at.
    #[cold]
    #[inline(never)]
    fn track_and<R>(
        &self,
        key: &K::Lookup,
        now: u64,
        f: impl Fn(&A::State, u64) -> R,
    ) -> Option<R> {
        let inserted = self.store.insert_and(
            key,
            now,
            || self.rule.fresh(),
            f,
            |state, now| self.rule.is_fresh(state, now),
        );
        match inserted {
            Inserted::Ran(result) => Some(result),
            Inserted::Full => None,
        }
    }

    /// The slow path of `check_n`: the lock-free lookup missed `key` or
    /// found its state retired.
    #[cold]
    #[inline(never)]
    fn check_untracked(&self, key: &K::Lookup, now: u64, cost: u64) -> Decision {
        self.decide_untracked(
            key,
            now,
            cost,
            |state, now| self.rule.check(state, now, cost),
            |decision| decision,
        )
    }

    /// The slow path of `allow_n`: as [`check_untracked`](Self::check_untracked),
    /// but computing only whether the request passes, as the hit path does
    /// (a first request for a key is common: each new client's first).
    #[cold]
    #[inline(never)]
    fn admit_untracked(&self, key: &K::Lookup, now: u64, cost: u64) -> bool {
        self.decide_untracked(
            key,
            now,
            cost,
            |state, now| self.rule.admit(state, now, cost),
            |decision| decision.allowed(),
        )
    }

    /// Answers with `decide` under the shard lock, where no state is
    /// retired, so `decide` always answers; an untracked key's answer (a
    /// fresh state's for a peek, a refusal when the key cap refuses it) is
    /// made from a [`Decision`] by `from_decision`.
    #[inline]
    fn decide_untracked<R>(
        &self,
        key: &K::Lookup,
        now: u64,
        cost: u64,
        decide: impl Fn(&A::State, u64) -> Option<R>,
        from_decision: impl FnOnce(Decision) -> R,
    ) -> R {
        if cost == 0 {
            // A peek must not start tracking the key.
            return match self.store.read_locked(key, now, decide).flatten() {
                Some(tracked) => tracked,
                None => from_decision(self.fresh_decision(now)),
            };
        }
        // `None`: the key cap refused the key.
        match self.track_and(key, now, decide).flatten() {
            Some(decided) => decided,
            None => from_decision(refusal(&self.rule)),
        }
    }

    /// A peek at a key that is not tracked: a fresh state's answer.
    fn fresh_decision(&self, now: u64) -> Decision {
        // A new state is never retired; a custom rule that says otherwise
        // gets a refusal rather than a panic.
        let fresh = self.rule.fresh();
        self.rule
            .check(&fresh, now, 0)
            .unwrap_or_else(|| refusal(&self.rule))
    }
}

impl<A, K, C, Q> RateLimiter<Q> for KeyedLimiter<A, K, C>
where
    A: Algorithm,
    K: Key,
    C: Clock,
    Q: Borrow<K::Lookup> + ?Sized,
{
    #[inline]
    fn check_n(&self, key: &Q, cost: u64) -> Result<Decision, InsufficientCapacity> {
        InsufficientCapacity::check(cost, self.rule.max_cost())?;
        let key = key.borrow();
        let now = self.clock.now_nanos();
        if let Some(decision) = self
            .store
            .read(key, |state| self.rule.check(state, now, cost))
        {
            // The hit path: no lock, no shared write besides the state's own.
            return Ok(decision);
        }
        Ok(self.check_untracked(key, now, cost))
    }

    #[inline]
    fn allow(&self, key: &Q) -> bool {
        self.allow_n(key, 1)
    }

    /// The `check_n` path, computing only whether the request passes (no
    /// remaining count, no reset time) while the key is tracked.
    #[inline]
    fn allow_n(&self, key: &Q, cost: u64) -> bool {
        if cost > self.rule.max_cost() {
            return false;
        }
        let key = key.borrow();
        let now = self.clock.now_nanos();
        if let Some(admitted) = self
            .store
            .read(key, |state| self.rule.admit(state, now, cost))
        {
            return admitted;
        }
        self.admit_untracked(key, now, cost)
    }
}

impl<A: Algorithm + fmt::Debug, K: Key, C> fmt::Debug for KeyedLimiter<A, K, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedLimiter")
            .field("rule", &self.rule)
            .field("quota", &self.quota)
            .finish_non_exhaustive()
    }
}
