//! [`PackedWord`]: a whole per-key state in one `AtomicU64`, updated by a
//! CAS loop around a pure decision function.

use crossbeam_utils::Backoff;

use crate::decision::Decision;
use crate::sync::{AtomicU64, Ordering};

/// One key's state packed into a single atomic word.
///
/// Each algorithm documents its own bit layout. The word is the entire state:
/// nothing else is published through it, which is why every access below can
/// be `Relaxed`.
#[derive(Debug)]
pub struct PackedWord(AtomicU64);

/// What a pure decision function returns for one old word.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Step {
    /// The answer to give if the word is still the one decided on.
    pub(crate) decision: Decision,
    /// The word to store, or `None` to store nothing (denied, or a peek).
    pub(crate) next: Option<u64>,
}

impl PackedWord {
    /// A word holding `bits`.
    pub fn new(bits: u64) -> Self {
        PackedWord(AtomicU64::new(bits))
    }

    /// The current bits.
    #[inline]
    pub fn load(&self) -> u64 {
        // Relaxed: the word is self-contained; any value in its modification
        // order is a state some serial history produced.
        self.0.load(Ordering::Relaxed)
    }

    /// Applies `decide` until its answer is stored against the word it read.
    ///
    /// `decide` is called again with the fresh value whenever another thread
    /// changed the word in between, so the returned decision always belongs
    /// to the state the update replaced: the CAS is the linearisation point.
    #[inline]
    pub(crate) fn update(&self, mut decide: impl FnMut(u64) -> Step) -> Decision {
        let mut current = self.load();
        let backoff = Backoff::new();
        loop {
            let step = decide(current);
            let Some(next) = step.next else {
                return step.decision;
            };
            // Relaxed on success and failure: the RMW on this single word is
            // totally ordered with every other RMW on it, and no other memory
            // depends on the value, so no acquire/release pairing is needed.
            match self
                .0
                .compare_exchange_weak(current, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return step.decision,
                Err(actual) => {
                    current = actual;
                    backoff.spin();
                }
            }
        }
    }
}
