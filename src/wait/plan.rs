//! The decisions a wait makes between sleeps, shared by the blocking and the
//! async loops so both behave identically.

use std::time::Duration;

use crate::clock::{Clock, SHARED_UPKEEP_INTERVAL, duration_to_nanos};
use crate::decision::Decision;
use crate::error::InsufficientCapacity;
use crate::wait::error::WaitError;
use crate::wait::jitter::Jitter;

/// The first sleep after a denial that came with no retry hint.
const FIRST_BLIND_SLEEP_NANOS: u64 = 1_000;
/// The longest sleep after a denial with no retry hint.
const MAX_BLIND_SLEEP_NANOS: u64 = 1_000_000;

/// A wait's timeout, measured on the sleeper's clock.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Deadline {
    start: u64,
    timeout: u64,
}

impl Deadline {
    pub(crate) fn start(clock: &impl Clock, timeout: Duration) -> Self {
        Deadline {
            start: clock.now_nanos(),
            timeout: duration_to_nanos(timeout),
        }
    }

    /// Nanoseconds waited so far.
    pub(crate) fn elapsed_nanos(&self, clock: &impl Clock) -> u64 {
        clock.now_nanos().saturating_sub(self.start)
    }

    /// How long the wait has lasted: zero if it never slept, so a call
    /// that found the units there reports no wait.
    pub(crate) fn waited(&self, clock: &impl Clock, slept: bool) -> Duration {
        if !slept {
            return Duration::ZERO;
        }
        Duration::from_nanos(self.elapsed_nanos(clock))
    }

    /// Nanoseconds of the timeout still left.
    pub(crate) fn left_nanos(&self, clock: &impl Clock) -> u64 {
        self.timeout.saturating_sub(self.elapsed_nanos(clock))
    }
}

/// What a re-checking wait does after one check.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Retry {
    /// The units were spent.
    Done,
    /// Sleep this long, then check again.
    Sleep(Duration),
    /// Give up.
    Fail(WaitError),
}

/// The state of a re-checking wait between checks.
#[derive(Debug)]
pub(crate) struct RetryPlan {
    /// The next sleep to use when a denial has no retry hint.
    blind_sleep: u64,
}

impl RetryPlan {
    pub(crate) fn new() -> Self {
        RetryPlan {
            blind_sleep: FIRST_BLIND_SLEEP_NANOS,
        }
    }

    /// The next move, given one check's result and the time left.
    pub(crate) fn after_check(
        &mut self,
        checked: Result<Decision, InsufficientCapacity>,
        left: u64,
        jitter: &Jitter,
    ) -> Retry {
        let decision = match checked {
            Ok(decision) => decision,
            Err(error) => return Retry::Fail(WaitError::Capacity(error)),
        };
        if decision.allowed() {
            return Retry::Done;
        }
        let mut needed = decision.retry_after_nanos();
        if needed == 0 {
            // A denial without a hint: back off instead of spinning.
            needed = self.blind_sleep;
            self.blind_sleep = (self.blind_sleep * 2).min(MAX_BLIND_SLEEP_NANOS);
        }
        if needed > left {
            return Retry::Fail(WaitError::Timeout {
                needed: Duration::from_nanos(needed),
                left: Duration::from_nanos(left),
            });
        }
        let extra = jitter.sample(left - needed);
        Retry::Sleep(Duration::from_nanos(needed + extra))
    }
}

/// How long a wait keeps sleeping while the limiter's clock shows no
/// progress: several publications of the default clock's shared upkeep.
const STALL_ALLOWANCE_NANOS: u64 = 4 * SHARED_UPKEEP_INTERVAL.as_nanos() as u64;

/// The shortest sleep while the limiter's clock shows no progress.
const STALL_STEP_NANOS: u64 = SHARED_UPKEEP_INTERVAL.as_nanos() as u64 / 4;

/// The state of a wait for a reservation to come due.
#[derive(Debug)]
pub(crate) struct ReadyPlan {
    /// The delay seen before the previous sleep (`u64::MAX` before any).
    last_delay: u64,
    /// Nanoseconds slept since the delay last shrank.
    stalled: u64,
}

impl ReadyPlan {
    pub(crate) fn new() -> Self {
        ReadyPlan {
            last_delay: u64::MAX,
            stalled: 0,
        }
    }

    /// The next sleep, or `None` when the wait is over.
    ///
    /// `delay` is read on the limiter's clock. A real sleep can end before
    /// that clock agrees (the default clock trails real time by up to its
    /// upkeep's interval), so the wait sleeps again for the remainder. A
    /// delay that does not shrink over [`STALL_ALLOWANCE_NANOS`] of sleeping
    /// means the sleeper does not move the limiter's clock at all (a manual
    /// clock with real sleeps), and sleeping on would never end.
    pub(crate) fn next_sleep(
        &mut self,
        delay: u64,
        left: u64,
        jitter: &Jitter,
    ) -> Option<Duration> {
        if delay == 0 {
            return None;
        }
        if delay >= self.last_delay {
            let step = delay.max(STALL_STEP_NANOS);
            if self.stalled.saturating_add(step) > STALL_ALLOWANCE_NANOS {
                return None;
            }
            self.stalled += step;
            return Some(Duration::from_nanos(step));
        }
        self.stalled = 0;
        let first = self.last_delay == u64::MAX;
        self.last_delay = delay;
        let extra = if first {
            jitter.sample(left.saturating_sub(delay))
        } else {
            0
        };
        Some(Duration::from_nanos(delay.saturating_add(extra)))
    }
}

#[cfg(all(test, not(tollgate_loom)))]
mod tests {
    use super::*;

    fn denied(retry: u64) -> Result<Decision, InsufficientCapacity> {
        Ok(Decision::reject(10, 0, retry, retry))
    }

    #[test]
    fn sleeps_the_hint_when_it_fits() {
        let mut plan = RetryPlan::new();
        let none = Jitter::none();
        assert_eq!(
            plan.after_check(denied(50), 50, &none),
            Retry::Sleep(Duration::from_nanos(50))
        );
        assert_eq!(
            plan.after_check(denied(51), 50, &none),
            Retry::Fail(WaitError::Timeout {
                needed: Duration::from_nanos(51),
                left: Duration::from_nanos(50),
            })
        );
        assert_eq!(
            plan.after_check(Ok(Decision::admit(10, 9, 1)), 0, &none),
            Retry::Done
        );
    }

    #[test]
    fn a_denial_without_hint_backs_off_doubling() {
        let mut plan = RetryPlan::new();
        let none = Jitter::none();
        let sleeps: Vec<Retry> = (0..12)
            .map(|_| plan.after_check(denied(0), u64::MAX, &none))
            .collect();
        assert_eq!(sleeps[0], Retry::Sleep(Duration::from_micros(1)));
        assert_eq!(sleeps[1], Retry::Sleep(Duration::from_micros(2)));
        assert_eq!(sleeps[11], Retry::Sleep(Duration::from_millis(1)));
    }

    #[test]
    fn jitter_never_runs_past_the_timeout() {
        let mut plan = RetryPlan::new();
        let jitter = Jitter::up_to(Duration::from_secs(1)).seeded(3);
        for _ in 0..100 {
            match plan.after_check(denied(40), 50, &jitter) {
                Retry::Sleep(d) => assert!((40..=50).contains(&d.as_nanos())),
                other => panic!("expected a sleep, got {other:?}"),
            }
        }
    }

    #[test]
    fn ready_plan_stops_when_the_clock_does_not_move() {
        let mut plan = ReadyPlan::new();
        let none = Jitter::none();
        assert_eq!(
            plan.next_sleep(100, 1000, &none),
            Some(Duration::from_nanos(100))
        );
        assert_eq!(
            plan.next_sleep(3, 1000, &none),
            Some(Duration::from_nanos(3))
        );
        // The delay stays at 3: sleep in steps until the allowance is spent.
        let mut stalled = Duration::ZERO;
        while let Some(sleep) = plan.next_sleep(3, 1000, &none) {
            assert_eq!(sleep, Duration::from_nanos(STALL_STEP_NANOS));
            stalled += sleep;
        }
        assert_eq!(stalled, Duration::from_nanos(STALL_ALLOWANCE_NANOS));
        assert_eq!(ReadyPlan::new().next_sleep(0, 1000, &none), None);
    }

    #[test]
    fn ready_plan_waits_out_a_clock_that_moves_in_steps() {
        // A clock published every millisecond: after a short sleep the
        // delay is unchanged, a while later it drops to zero.
        let mut plan = ReadyPlan::new();
        let none = Jitter::none();
        assert!(plan.next_sleep(10_000_000, u64::MAX, &none).is_some());
        assert_eq!(
            plan.next_sleep(60_000, u64::MAX, &none),
            Some(Duration::from_nanos(60_000))
        );
        assert_eq!(
            plan.next_sleep(60_000, u64::MAX, &none),
            Some(Duration::from_nanos(STALL_STEP_NANOS))
        );
        assert_eq!(plan.next_sleep(0, u64::MAX, &none), None);
    }
}
