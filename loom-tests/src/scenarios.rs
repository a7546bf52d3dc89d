//! Spending scenarios shared by several models: the same threads and the
//! same checks, run against any single-key limiter.

use std::time::Duration;

use loom::sync::Arc;
use loom::thread;
use tollgate::RateLimiter;

use crate::serial::{Event, Reference, Timing, admitted_units, assert_explained, observe};
use crate::{Bound, RecordingClock, explore};

/// Costs each spending thread asks for, in order.
pub type Plan = &'static [&'static [u64]];

/// Runs one thread per entry of `plan`, each spending its costs in order on
/// a shared limiter; returns every thread's history.
fn spend_concurrently<L>(limiter: &Arc<L>, plan: Plan) -> Vec<Vec<Event>>
where
    L: RateLimiter<()> + Send + Sync + 'static,
{
    let handles: Vec<_> = plan
        .iter()
        .map(|&costs| {
            let limiter = Arc::clone(limiter);
            thread::spawn(move || {
                costs
                    .iter()
                    .map(|&cost| observe(&*limiter, &(), cost))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|handle| handle.join().expect("spending thread panicked"))
        .collect()
}

/// Checks what every model requires of each single decision: it reports
/// the configured limit and never more units than that remaining, which a
/// torn or corrupted state would break.
pub fn assert_well_formed(limit: u64, events: &[Event]) {
    for event in events {
        assert!(
            event.limit == limit && event.answer.remaining <= limit,
            "model violation: decision {event:?} is not a state of a limit-{limit} key"
        );
    }
}

/// Threads spend `plan` from a fresh limiter built by `make` while time
/// stands still; the limiter holds `capacity` units.
///
/// Checks: every decision is well formed; exactly as many units pass as the
/// capacity allows (never more; a refusal only when what was left could not
/// cover it); a final peek sees the capacity minus what was admitted; and
/// some serial order of the calls explains every `remaining`.
pub fn frozen_spend<L, F>(bound: Bound, capacity: u64, plan: Plan, make: F)
where
    L: RateLimiter<()> + Send + Sync + 'static,
    F: Fn(RecordingClock) -> L + Send + Sync + 'static,
{
    explore(bound, move || {
        let limiter = Arc::new(make(RecordingClock::default()));
        let threads = spend_concurrently(&limiter, plan);
        let last = observe(&*limiter, &(), 0);

        let events: Vec<Event> = threads.iter().flatten().copied().collect();
        assert_well_formed(capacity, &events);
        let admitted = admitted_units(&events);
        assert!(
            admitted <= capacity,
            "model violation: {admitted} units admitted from a capacity of {capacity}: {threads:?}"
        );
        for event in events.iter().filter(|event| !event.answer.allowed) {
            assert!(
                event.cost.max(1) > capacity - admitted,
                "model violation: {event:?} refused although {} units were never spent",
                capacity - admitted
            );
        }
        assert_eq!(
            last.answer.remaining,
            capacity - admitted,
            "model violation: the state lost or invented units: {threads:?}"
        );
        let pool = crate::reference::Pool { capacity };
        assert_explained(&pool, &[], &threads, &[last], Timing::AsRead);
    });
}

/// Where the crossing scenario reads time.
#[derive(Clone, Copy, Debug)]
pub struct Crossing {
    /// Time of the first calls.
    pub start: Duration,
    /// Time the crossing thread moves the clock to.
    pub later: Duration,
}

/// One thread spends a unit, moves the clock from `start` to `later`, and
/// spends another, while a second thread spends two units; a final peek is
/// made at `later`.
///
/// Checks: every decision is well formed; units admitted at readings of
/// `later` stay within `limit` (the newest window holds no more than its
/// limit); and `reference`, replaying the calls at the readings they were
/// made at, explains every decision in some serial order (which carries the
/// per-window bounds and the fresh start of each window).
pub fn crossing_spend<L, R, F>(bound: Bound, limit: u64, times: Crossing, reference: R, make: F)
where
    L: RateLimiter<()> + Send + Sync + 'static,
    R: Reference + Send + Sync + 'static,
    F: Fn(RecordingClock) -> L + Send + Sync + 'static,
{
    explore(bound, move || {
        let clock = RecordingClock::at(times.start);
        let limiter = Arc::new(make(clock.clone()));
        let crosser = {
            let limiter = Arc::clone(&limiter);
            thread::spawn(move || {
                let first = observe(&*limiter, &(), 1);
                clock.set(times.later);
                vec![first, observe(&*limiter, &(), 1)]
            })
        };
        let mut threads = spend_concurrently(&limiter, &[&[1, 1]]);
        threads.push(crosser.join().expect("crossing thread panicked"));
        let last = observe(&*limiter, &(), 0);

        let events: Vec<Event> = threads.iter().flatten().copied().collect();
        assert_well_formed(limit, &events);
        let later = u64::try_from(times.later.as_nanos()).expect("short model times");
        let admitted_later = admitted_units(events.iter().filter(|event| event.now == later));
        assert!(
            admitted_later <= limit,
            "model violation: {admitted_later} units admitted at one instant under a limit of {limit}: {threads:?}"
        );
        assert_explained(&reference, &[], &threads, &[last], Timing::AsRead);
    });
}
