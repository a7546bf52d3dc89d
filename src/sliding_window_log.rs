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
use crate::sync::{AtomicU64, Mutex, Ordering, lock};

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
    /// What the store reads without the log's lock, in one word:
    ///
    /// | bits | meaning                                                     |
    /// |------|-------------------------------------------------------------|
    /// | 0    | retired: out of service, every request is refused entry     |
    /// | 1-63 | admissions so far, wrapping: a sweep that judged the log between two locks retires it only if this count did not move |
    ///
    /// Written only under `inner`'s lock; retiring and reviving also hold
    /// the shard's lock, under which the store reads the retired bit.
    mark: AtomicU64,
}

/// The mark's retired bit.
const RETIRED: u64 = 1;

/// One admission in the mark's count (bits 1-63).
const ADMISSION: u64 = 2;

impl LogState {
    /// A live state holding `log`, its count at zero.
    fn live(log: Log) -> Self {
        LogState {
            inner: Mutex::new(log),
            mark: AtomicU64::new(0),
        }
    }

    /// The mark, for a caller holding `inner`'s lock, or the shard's for
    /// the retired bit.
    fn mark(&self) -> u64 {
        // Relaxed: every write happens under `inner`'s lock, and every
        // write of the retired bit also under the shard's; the caller holds
        // the lock that ordered the last write it needs before this load.
        self.mark.load(Ordering::Relaxed)
    }

    /// Replaces the mark; the caller holds `inner`'s lock (and the shard's
    /// when the retired bit changes).
    fn set_mark(&self, mark: u64) {
        // Relaxed: readers that act on the mark hold one of the locks the
        // caller holds, whose release publishes this store.
        self.mark.store(mark, Ordering::Relaxed);
    }
}

#[derive(Debug, Default)]
struct Log {
    /// `(admitted at, units)`, oldest first, times strictly increasing.
    entries: VecDeque<(u64, u64)>,
    /// Sum of `units` over `entries`.
    total: u64,
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
        let mark = state.mark();
        if mark & RETIRED != 0 {
            return None;
        }
        let decision = self.decide_live(&mut log, now, cost);
        // An admitted unit is logged (a cost of 0 only looks).
        if cost > 0 && decision.allowed() {
            state.set_mark(mark.wrapping_add(ADMISSION));
        }
        Some(decision)
    }

    fn is_fresh(&self, state: &LogState, now: u64) -> bool {
        let log = lock(&state.inner);
        state.mark() & RETIRED == 0
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
        self.mark() & RETIRED != 0
    }

    fn retire_if(&self, idle: impl Fn(&Self) -> bool) -> bool {
        // `idle` takes the log's lock itself, so it judges after this read
        // and before the lock below; an admission in between moves the
        // count. Read without the lock, the mark may be older than the log,
        // which only fails the comparison below. Acquire: keeps `idle`'s
        // reads after this one.
        let before = self.mark.load(Ordering::Acquire);
        // A retired log stays so until the shard's lock holder revives it,
        // and sweeps pass over the retired entries a table still holds.
        if before & RETIRED != 0 || !idle(self) {
            return false;
        }
        let _log = lock(&self.inner);
        if self.mark() != before {
            return false;
        }
        self.set_mark(before | RETIRED);
        true
    }

    fn retire_and_take(&self) -> Option<Self> {
        let mut log = lock(&self.inner);
        let mark = self.mark();
        if mark & RETIRED != 0 {
            return None;
        }
        let taken = std::mem::take(&mut *log);
        self.set_mark(mark | RETIRED);
        // A fresh count: it only has to move between a sweep's two reads
        // of one state.
        Some(LogState::live(taken))
    }

    fn revive(&self, fresh: Self) {
        let fresh = fresh
            .inner
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut log = lock(&self.inner);
        *log = fresh;
        // The count starts again: sweeps, which compare it, hold the
        // shard's lock, as the caller does.
        self.set_mark(0);
    }
}
