//! Sliding window log: exact. A request passes when fewer than `limit` units
//! were admitted in the last `window`; a unit admitted at `t` stops counting
//! at exactly `t + window`.
//!
//! # Per-key state: a short lock, not atomics
//!
//! The log has up to `limit` entries, so it cannot live in one word. Each key
//! holds a `Mutex` around a queue of `(time, units)` entries (admissions at
//! the same instant share an entry) and their running total. The critical
//! section is a few comparisons plus amortised O(1) queue work, and the lock
//! is per key, so threads working on different keys never meet; a lock-free
//! log would need a multi-word ring updated atomically, which costs more than
//! it saves. Memory is O(limit) per key in the worst case (one entry per
//! admitted unit), and a key whose every entry has expired is fresh.
//!
//! Time never moves backwards for a key: a clock reading earlier than the
//! newest entry is treated as the newest entry's time.

use std::collections::VecDeque;

use crate::algorithm::Algorithm;
use crate::clock::MonotonicClock;
use crate::decision::Decision;
use crate::keyed::KeyedLimiter;
use crate::quota::Quota;
use crate::retire::Retire;
use crate::sync::{AtomicBool, Mutex, Ordering, lock};

/// A keyed exact sliding-window log: `quota.limit()` per any
/// `quota.window()`-long span.
pub type SlidingWindowLog<K = String, C = MonotonicClock> =
    KeyedLimiter<SlidingWindowLogRule, K, C>;

/// The sliding-window-log rule; see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlidingWindowLogRule {
    limit: u64,
    window: u64,
}

/// One key's log.
#[derive(Debug)]
pub struct LogState {
    inner: Mutex<Log>,
    /// Taken out of service by the store; every request is refused entry.
    /// Written only while holding both `inner`'s lock and the shard's (the
    /// store retires and revives states under it), so either lock orders
    /// a read, and the store's checks of a whole table take no state lock.
    retired: AtomicBool,
}

impl LogState {
    /// A live state holding `log`.
    fn live(log: Log) -> Self {
        LogState {
            inner: Mutex::new(log),
            retired: AtomicBool::new(false),
        }
    }

    /// Whether the state is retired, for a caller holding `inner`'s lock or
    /// the shard's.
    fn retired_under_lock(&self) -> bool {
        // Relaxed: every write happens under both locks, and the caller
        // holds one of them, whose acquire ordered the last write before
        // this load.
        self.retired.load(Ordering::Relaxed)
    }

    /// Sets the mark; the caller holds `inner`'s lock and the shard's.
    fn set_retired(&self, retired: bool) {
        // Relaxed: readers hold one of the two locks the caller holds, and
        // its release publishes this store.
        self.retired.store(retired, Ordering::Relaxed);
    }
}

#[derive(Debug, Default)]
struct Log {
    /// `(admitted at, units)`, oldest first, times strictly increasing.
    entries: VecDeque<(u64, u64)>,
    /// Sum of `units` over `entries`.
    total: u64,
    /// Admissions so far: a sweep that judged the log between two locks
    /// retires it only if no admission came in between.
    admissions: u64,
}

impl Log {
    /// Drops entries that stopped counting at or before `now`.
    fn expire(&mut self, now: u64, window: u64) {
        while let Some(&(at, units)) = self.entries.front() {
            if at.saturating_add(window) > now {
                break;
            }
            self.entries.pop_front();
            self.total -= units;
        }
        if self.entries.is_empty() && self.entries.capacity() > 64 {
            self.entries = VecDeque::new();
        }
    }

    /// The effective time: never earlier than the newest entry.
    fn clamp(&self, now: u64) -> u64 {
        self.entries.back().map_or(now, |&(at, _)| now.max(at))
    }

    /// Time until the log is empty.
    fn reset_after(&self, now: u64, window: u64) -> u64 {
        self.entries
            .back()
            .map_or(0, |&(at, _)| at.saturating_add(window).saturating_sub(now))
    }

    /// Time until `cost` more units fit under `limit`.
    fn retry_after(&self, now: u64, window: u64, limit: u64, cost: u64) -> u64 {
        let mut still_counted = self.total;
        for &(at, units) in &self.entries {
            still_counted -= units;
            if cost <= limit - still_counted {
                return at.saturating_add(window).saturating_sub(now);
            }
        }
        0
    }
}

impl SlidingWindowLogRule {
    fn decide_live(&self, log: &mut Log, now: u64, cost: u64) -> Decision {
        let now = log.clamp(now);
        log.expire(now, self.window);
        let wanted = cost.max(1);
        let remaining = self.limit - log.total;
        if wanted > remaining {
            let retry = log.retry_after(now, self.window, self.limit, wanted);
            let reset = log.reset_after(now, self.window);
            return Decision::reject(self.limit, remaining, retry, reset);
        }
        if cost == 0 {
            return Decision::admit(self.limit, remaining, log.reset_after(now, self.window));
        }
        match log.entries.back_mut() {
            Some((at, units)) if *at == now => *units += cost,
            _ => log.entries.push_back((now, cost)),
        }
        log.total += cost;
        log.admissions += 1;
        Decision::admit(
            self.limit,
            self.limit - log.total,
            log.reset_after(now, self.window),
        )
    }
}

impl Algorithm for SlidingWindowLogRule {
    type State = LogState;

    fn from_quota(quota: &Quota) -> Self {
        SlidingWindowLogRule {
            limit: quota.limit(),
            window: quota.window_nanos(),
        }
    }

    fn fresh(&self) -> LogState {
        LogState::live(Log::default())
    }

    #[inline]
    fn max_cost(&self) -> u64 {
        self.limit
    }

    #[inline]
    fn limit(&self) -> u64 {
        self.limit
    }

    fn check(&self, state: &LogState, now: u64, cost: u64) -> Option<Decision> {
        let mut log = lock(&state.inner);
        if state.retired_under_lock() {
            return None;
        }
        Some(self.decide_live(&mut log, now, cost))
    }

    fn is_fresh(&self, state: &LogState, now: u64) -> bool {
        let log = lock(&state.inner);
        !state.retired_under_lock()
            && log
                .entries
                .back()
                .is_none_or(|&(at, _)| at.saturating_add(self.window) <= now)
    }

    fn reset_bound_nanos(&self) -> u64 {
        self.window
    }
}

impl Retire for LogState {
    fn is_retired(&self) -> bool {
        // The store asks under the shard's lock, which orders every retire
        // and revive (a caller holding neither lock gets a moment's view).
        self.retired_under_lock()
    }

    fn retire_if(&self, idle: impl Fn(&Self) -> bool) -> bool {
        // A retired log stays so until the shard's lock holder revives it,
        // and sweeps pass over the retired entries a table still holds.
        if self.retired_under_lock() {
            return false;
        }
        // `idle` takes the lock itself, so it judges between two locks; the
        // admission count tells whether the log changed in between.
        let before = lock(&self.inner).admissions;
        if !idle(self) {
            return false;
        }
        let log = lock(&self.inner);
        if self.retired_under_lock() || log.admissions != before {
            return false;
        }
        self.set_retired(true);
        true
    }

    fn retire_and_take(&self) -> Option<Self> {
        let mut log = lock(&self.inner);
        if self.retired_under_lock() {
            return None;
        }
        let taken = std::mem::take(&mut *log);
        self.set_retired(true);
        Some(LogState::live(taken))
    }

    fn revive(&self, fresh: Self) {
        let fresh = fresh
            .inner
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut log = lock(&self.inner);
        *log = fresh;
        self.set_retired(false);
    }
}
