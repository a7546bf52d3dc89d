//! Serial explanations of concurrent histories.
//!
//! Each model thread records one [`Event`] per call. The histories are
//! correct when some interleaving of the threads' calls, each thread's calls
//! kept in program order, replayed one at a time against a reference model,
//! gives every call exactly the answer it got. That is the "consistent with
//! some serial order" claim, checked by trying every interleaving.

use std::fmt::Debug;

use tollgate::{Decision, RateLimiter};

use crate::RecordingClock;

/// One call as a model thread saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// Units asked for (0: a peek).
    pub cost: u64,
    /// The clock reading the decision was made at.
    pub now: u64,
    /// The answer.
    pub answer: Answer,
    /// The limit the decision reported.
    pub limit: u64,
}

/// The part of a [`Decision`] a reference model predicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    /// Whether the call passed.
    pub allowed: bool,
    /// Units left after it.
    pub remaining: u64,
}

impl Answer {
    /// The answer carried by `decision`.
    pub fn of(decision: &Decision) -> Self {
        Answer {
            allowed: decision.allowed(),
            remaining: decision.remaining(),
        }
    }
}

/// Spends `cost` on `key` and records the call; the limiter must read its
/// time from a [`RecordingClock`].
pub fn observe<Q, L>(limiter: &L, key: &Q, cost: u64) -> Event
where
    Q: ?Sized,
    L: RateLimiter<Q> + ?Sized,
{
    let decision = limiter
        .check_n(key, cost)
        .expect("model violation: a cost within capacity was refused");
    Event {
        cost,
        now: RecordingClock::take_last_reading(),
        answer: Answer::of(&decision),
        limit: decision.limit(),
    }
}

/// A reference model: the answers a rule gives when calls arrive one by one.
pub trait Reference {
    /// The state of one key.
    type State: Clone + Debug;

    /// A key never seen before.
    fn fresh(&self) -> Self::State;

    /// Answers a call of `cost` units made at `now`, updating `state`.
    fn answer(&self, state: &mut Self::State, cost: u64, now: u64) -> Answer;
}

/// Which times a call may be replayed at.
#[derive(Clone, Copy, Debug)]
pub enum Timing<'a> {
    /// Exactly at its clock reading.
    AsRead,
    /// At its reading or any later time in the list: for calls that may
    /// take effect after a later reading was already acted on (a request
    /// that finds its key just evicted is judged as of the eviction).
    NoEarlierThan(&'a [u64]),
}

/// Whether a serial order of `threads` explains every event, starting from
/// a fresh key after `before` and ending with `after` (both replayed as
/// read, in order).
pub fn explains<R: Reference>(
    reference: &R,
    before: &[Event],
    threads: &[Vec<Event>],
    after: &[Event],
    timing: Timing<'_>,
) -> bool {
    let mut state = reference.fresh();
    for event in before {
        if reference.answer(&mut state, event.cost, event.now) != event.answer {
            return false;
        }
    }
    let mut next = vec![0; threads.len()];
    search(reference, &state, threads, &mut next, after, timing)
}

/// Panics unless [`explains`] holds, printing the histories.
pub fn assert_explained<R: Reference>(
    reference: &R,
    before: &[Event],
    threads: &[Vec<Event>],
    after: &[Event],
    timing: Timing<'_>,
) {
    assert!(
        explains(reference, before, threads, after, timing),
        "model violation: no serial order explains these decisions\n\
         before: {before:?}\nthreads: {threads:?}\nafter: {after:?}"
    );
}

fn search<R: Reference>(
    reference: &R,
    state: &R::State,
    threads: &[Vec<Event>],
    next: &mut [usize],
    after: &[Event],
    timing: Timing<'_>,
) -> bool {
    if next
        .iter()
        .zip(threads)
        .all(|(&at, events)| at == events.len())
    {
        let mut state = state.clone();
        return after
            .iter()
            .all(|event| reference.answer(&mut state, event.cost, event.now) == event.answer);
    }
    for thread in 0..threads.len() {
        let Some(event) = threads[thread].get(next[thread]) else {
            continue;
        };
        for now in candidate_times(event.now, timing) {
            let mut replayed = state.clone();
            if reference.answer(&mut replayed, event.cost, now) != event.answer {
                continue;
            }
            next[thread] += 1;
            let found = search(reference, &replayed, threads, next, after, timing);
            next[thread] -= 1;
            if found {
                return true;
            }
        }
    }
    false
}

fn candidate_times(read: u64, timing: Timing<'_>) -> Vec<u64> {
    match timing {
        Timing::AsRead => vec![read],
        Timing::NoEarlierThan(times) => std::iter::once(read)
            .chain(times.iter().copied().filter(|&t| t > read))
            .collect(),
    }
}

/// Units admitted across `events`.
pub fn admitted_units<'a>(events: impl IntoIterator<Item = &'a Event>) -> u64 {
    events
        .into_iter()
        .filter(|event| event.answer.allowed)
        .map(|event| event.cost)
        .sum()
}
