//! Running one model with an explicit preemption bound.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How many preemptions `loom` may insert into one execution.
#[derive(Clone, Copy, Debug)]
pub enum Bound {
    /// Every interleaving: for models small enough to finish quickly.
    Exhaustive,
    /// At most this many preemptions per execution.
    Preemptions(usize),
}

/// Set to `1`, makes every model exhaustive, whatever its bound and
/// `LOOM_MAX_PREEMPTIONS` say: the deepest search, run by hand.
const EXHAUSTIVE_VAR: &str = "TOLLGATE_LOOM_EXHAUSTIVE";

/// Runs `model` under `loom` with `bound`.
///
/// `LOOM_MAX_PREEMPTIONS`, when set, overrides the bound for every model, so
/// a deeper search can be run by hand without editing the tests;
/// `TOLLGATE_LOOM_EXHAUSTIVE=1` lifts every bound.
pub fn explore<F>(bound: Bound, model: F)
where
    F: Fn() + Send + Sync + 'static,
{
    let mut builder = loom::model::Builder::new();
    if std::env::var(EXHAUSTIVE_VAR).is_ok_and(|value| value == "1") {
        builder.preemption_bound = None;
    } else if builder.preemption_bound.is_none() {
        builder.preemption_bound = match bound {
            Bound::Exhaustive => None,
            Bound::Preemptions(n) => Some(n),
        };
    }
    let effective = builder.preemption_bound;
    let executions = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&executions);
    builder.check(move || {
        // Relaxed: a tally read only after `check` has joined every run.
        counter.fetch_add(1, Ordering::Relaxed);
        model();
    });
    // Relaxed: as above; visible with `--nocapture`, for sizing the bounds.
    let executions = executions.load(Ordering::Relaxed);
    match effective {
        Some(n) => eprintln!("explored {executions} executions, at most {n} preemptions each"),
        None => eprintln!("explored all {executions} executions"),
    }
}
