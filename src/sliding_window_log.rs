//! Sliding window log: exact. A request passes when fewer than `limit` units
//! were admitted in the last `window`; a unit admitted at `t` stops counting
//! at exactly `t + window`.
//!
//! # Per-key state: a short lock, not atomics
//!
//! The log has up to `limit` entries, so it cannot live in one word. Each key
//! holds a `Mutex` around a queue of `(time, units)` entries (admissions at
//! the same instant share an entry) and their running total. A log with one
//! entry keeps it inline (`src/log_entries.rs`), so a key admitted at only one
//! instant allocates nothing and a hit reads no buffer. The critical
//! section is a few comparisons plus amortised O(1) queue work, and the lock
//! is per key, so threads working on different keys never meet; a lock-free
//! log would need a multi-word ring updated atomically, which costs more than
//! it saves. Memory is O(limit) per key in the worst case (one entry per
//! admitted unit), and a key whose every entry has expired is fresh.
//!
//! Time never moves backwards for a key: a clock reading earlier than the
//! newest entry is treated as the newest entry's time.

use crate::algorithm::Algorithm;
use crate::clock::MonotonicClock;
use crate::decision::Decision;
use crate::keyed::KeyedLimiter;
use crate::log_entries::LogEntries;
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
    /// | 1-63 | stamp: 0 while nothing was admitted, else at least one more than the newest entry's time; every admission raises it by one or more (up to [`MAX_STAMP`]) |
    ///
    /// The stamp lets a sweep judge the log without its lock, and since it
    /// never repeats, a sweep that compares it again under the lock knows
    /// whether an admission came in between. Written only under `inner`'s
    /// lock; retiring and reviving also hold the shard's lock, under which
    /// the store reads the retired bit.
    mark: AtomicU64,
}

/// The mark's retired bit.
const RETIRED: u64 = 1;

/// The highest stamp (bits 1-63 all set). An admission at a clock reading
/// past `MAX_STAMP - 2` ns (about 292 years) leaves the stamp here, where it
/// no longer moves, so a log stamped so is never judged fresh (the sweep
/// could not tell a later admission from none).
const MAX_STAMP: u64 = u64::MAX >> 1;

/// The stamp an admission at `at` leaves, after `stamp`: above both the
/// old stamp and `at`, so it never repeats below [`MAX_STAMP`].
fn next_stamp(stamp: u64, at: u64) -> u64 {
    stamp
        .saturating_add(1)
        .max(at.saturating_add(1))
        .min(MAX_STAMP)
}

impl LogState {
    /// A live state holding `log`, with `stamp` (see the mark's layout).
    fn live(log: Log, stamp: u64) -> Self {
        LogState {
            inner: Mutex::new(log),
            mark: AtomicU64::new(stamp << 1),
        }
    }

    /// Whether the mark shows a live log that admitted nothing counting at
    /// `now` or later; no lock needed.
    fn is_fresh_at(&self, now: u64, window: u64) -> bool {
        // Relaxed: a sweep acts on this answer only after comparing the
        // mark again under the log's lock; other callers get a moment's view.
        let mark = self.mark.load(Ordering::Relaxed);
        let stamp = mark >> 1;
        // The newest entry's time is at most `stamp - 1`.
        mark & RETIRED == 0
            && (stamp == 0 || (stamp < MAX_STAMP && (stamp - 1).saturating_add(window) <= now))
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
    entries: LogEntries,
    /// Sum of `units` over `entries`.
    total: u64,
}

impl Log {
    /// Drops entries that stopped counting at or before `now`.
    fn expire(&mut self, now: u64, window: u64) {
        while let Some((at, units)) = self.entries.front() {
            if at.saturating_add(window) > now {
                break;
            }
            self.entries.pop_front();
            self.total -= units;
        }
    }

    /// The effective time: never earlier than the newest entry.
    fn clamp(&self, now: u64) -> u64 {
        self.entries.back().map_or(now, |(at, _)| now.max(at))
    }

    /// Time until the log is empty.
    fn reset_after(&self, now: u64, window: u64) -> u64 {
        self.entries
            .back()
            .map_or(0, |(at, _)| at.saturating_add(window).saturating_sub(now))
    }

    /// Time until `cost` more units fit under `limit`.
    fn retry_after(&self, now: u64, window: u64, limit: u64, cost: u64) -> u64 {
        let mut still_counted = self.total;
        for (at, units) in self.entries.iter() {
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
        LogState::live(Log::default(), 0)
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
        // An admitted unit is logged (a cost of 0 only looks), as the
        // newest entry.
        if cost > 0 && decision.allowed() {
            let newest = log.entries.back().map_or(now, |(at, _)| at);
            state.set_mark(next_stamp(mark >> 1, newest) << 1);
        }
        Some(decision)
    }

    fn is_fresh(&self, state: &LogState, now: u64) -> bool {
        state.is_fresh_at(now, self.window)
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
        // A first look without the lock, so a sweep locks only the logs it
        // may retire. Relaxed: `idle` reads only this word, and the second
        // look, ordered by the lock, decides.
        let before = self.mark.load(Ordering::Relaxed);
        // A retired log stays so until the shard's lock holder revives it,
        // and sweeps pass over the retired entries a table still holds.
        if before & RETIRED != 0 || !idle(self) {
            return false;
        }
        let _log = lock(&self.inner);
        // Every write of the mark holds this lock, so it stands still now.
        // An admission since the first look raised the stamp: judge the
        // log again as it is, rather than give up on a log that may still
        // be idle (or, for a removal, whose judgment is always yes).
        let mark = self.mark();
        if mark & RETIRED != 0 || (mark != before && !idle(self)) {
            return false;
        }
        self.set_mark(mark | RETIRED);
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
        // The stamp goes with the entries it bounds.
        Some(LogState::live(taken, mark >> 1))
    }

    fn revive(&self, fresh: Self) {
        // Relaxed: `fresh` is this thread's own.
        let stamp = fresh.mark.load(Ordering::Relaxed) >> 1;
        let fresh = fresh
            .inner
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut log = lock(&self.inner);
        *log = fresh;
        // The stamp may fall here: sweeps, which compare it, hold the
        // shard's lock, as the caller does.
        self.set_mark(stamp << 1);
    }
}

#[cfg(all(test, not(tollgate_loom)))]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Two units per 100 ns.
    fn rule() -> SlidingWindowLogRule {
        SlidingWindowLogRule::from_quota(&Quota::new(2, Duration::from_nanos(100)).unwrap())
    }

    fn mark(state: &LogState) -> u64 {
        state.mark.load(Ordering::Relaxed)
    }

    /// The sweep's comparison relies on it: two admissions logged at one
    /// instant, or with a reading older than the newest entry, still leave
    /// different marks.
    #[test]
    fn every_admission_moves_the_mark() {
        let rule = SlidingWindowLogRule::from_quota(&Quota::per_second(10));
        let state = rule.fresh();
        let mut seen = vec![mark(&state)];
        for now in [50, 50, 50, 20, 0, 50] {
            assert!(rule.check(&state, now, 1).unwrap().allowed());
            seen.push(mark(&state));
        }
        let mut distinct = seen.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), seen.len(), "{seen:?}");
    }

    /// Denials and peeks log nothing, so they leave the mark as it was.
    #[test]
    fn denials_and_peeks_leave_the_mark() {
        let rule = rule();
        let state = rule.fresh();
        assert!(rule.check(&state, 10, 2).unwrap().allowed());
        let spent = mark(&state);
        assert!(!rule.check(&state, 20, 1).unwrap().allowed());
        // A peek on a full log is answered as a refusal of one unit.
        assert!(!rule.check(&state, 20, 0).unwrap().allowed());
        assert_eq!(mark(&state), spent);
    }

    /// Judged from the mark alone: fresh exactly when the newest entry
    /// stops counting.
    #[test]
    fn fresh_once_the_newest_entry_stops_counting() {
        let rule = rule();
        let state = rule.fresh();
        assert!(rule.is_fresh(&state, 0));
        assert!(rule.check(&state, 10, 1).unwrap().allowed());
        assert!(rule.check(&state, 40, 1).unwrap().allowed());
        assert!(!rule.is_fresh(&state, 139));
        assert!(rule.is_fresh(&state, 140));
    }

    /// A move keeps the judgment; a retired log is never fresh.
    #[test]
    fn a_moved_log_is_judged_as_before() {
        let rule = rule();
        let state = rule.fresh();
        assert!(rule.check(&state, 10, 1).unwrap().allowed());
        let moved = state.retire_and_take().unwrap();
        assert!(!rule.is_fresh(&state, 1_000));
        assert!(!rule.is_fresh(&moved, 109));
        assert!(rule.is_fresh(&moved, 110));
        assert!(rule.check(&moved, 20, 1).unwrap().allowed());
        assert!(!rule.is_fresh(&moved, 119));
    }

    /// Runs `state.retire_if` with an admission at `at` landing between its
    /// first look (which finds the log idle) and its lock, as another
    /// thread's would; later looks answer `later`. Returns whether it retired
    /// the log and how many looks it took.
    fn retire_raced_by_admission(
        rule: &SlidingWindowLogRule,
        state: &LogState,
        at: u64,
        later: impl Fn(&LogState) -> bool,
    ) -> (bool, u32) {
        let looks = std::cell::Cell::new(0);
        let retired = state.retire_if(|log| {
            looks.set(looks.get() + 1);
            if looks.get() == 1 {
                assert!(rule.check(log, at, 1).unwrap().allowed());
                return true;
            }
            later(log)
        });
        (retired, looks.get())
    }

    /// An admission between the first look and the lock does not make a
    /// removal fail: the log is judged again under its lock, so a judgment
    /// that holds whatever the log holds still retires it.
    #[test]
    fn an_admission_racing_a_removal_is_judged_again() {
        let rule = rule();
        let state = rule.fresh();
        let (retired, looks) = retire_raced_by_admission(&rule, &state, 10, |_| true);
        assert!(retired);
        assert_eq!(looks, 2, "judged again under the lock");
        assert!(state.is_retired());
        assert!(rule.check(&state, 20, 1).is_none());
    }

    /// A sweep whose first look found the log idle keeps it when an
    /// admission in between made it busy.
    #[test]
    fn an_admission_racing_a_sweep_keeps_the_log() {
        let rule = rule();
        let state = rule.fresh();
        let (retired, _) =
            retire_raced_by_admission(&rule, &state, 50, |log| rule.is_fresh(log, 100));
        assert!(!retired);
        assert!(!state.is_retired());
        assert!(!rule.check(&state, 60, 2).unwrap().allowed());
    }

    /// At the clock's end the stamp stops moving, so the log is never
    /// judged fresh there.
    #[test]
    fn a_log_stamped_at_the_clock_end_is_never_fresh() {
        assert_eq!(next_stamp(MAX_STAMP, 0), MAX_STAMP);
        assert_eq!(next_stamp(0, u64::MAX), MAX_STAMP);
        assert_eq!(next_stamp(7, 3), 8);
        assert_eq!(next_stamp(7, 9), 10);
        let rule = rule();
        let state = rule.fresh();
        assert!(rule.check(&state, u64::MAX - 200, 1).unwrap().allowed());
        assert!(!rule.is_fresh(&state, u64::MAX));
    }
}
