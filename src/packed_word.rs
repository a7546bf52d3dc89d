//! [`PackedWord`]: a whole per-key state in one `AtomicU64`, updated by a
//! CAS loop around a pure decision function.

use crossbeam_utils::Backoff;

use crate::decision::Decision;
use crate::retire::Retire;
use crate::sync::{AtomicU64, Ordering};

/// One key's state packed into a single atomic word.
///
/// Each algorithm documents its own bit layout. The word is the entire state:
/// nothing else is published through it, which is why every access below can
/// be `Relaxed`.
///
/// One value is reserved: [`PackedWord::RETIRED`] (all ones) marks a state
/// the keyed store took out of service (see [`Retire`]). No rule ever
/// stores it, so an update that reads it knows the state was retired.
#[derive(Debug)]
pub struct PackedWord(AtomicU64);

/// What a pure decision function returns for one old word: a full
/// [`Decision`] by default, or only whether it passed (`Step<bool>`, the
/// `allow` path, which computes none of the figures).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Step<R = Decision> {
    /// The answer to give if the word is still the one decided on.
    pub(crate) decision: R,
    /// The word to store, or `None` to store nothing (denied, or a peek).
    pub(crate) next: Option<u64>,
}

impl PackedWord {
    /// The reserved value of a retired state; no rule produces it.
    pub const RETIRED: u64 = u64::MAX;

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

    /// Applies `decide` until its answer is stored against the word it read;
    /// `None`, without calling `decide`, once the word is retired.
    ///
    /// `decide` is called again with the fresh value whenever another thread
    /// changed the word in between, so the returned decision always belongs
    /// to the state the update replaced: the CAS is the linearisation point.
    /// `decide` never returns [`RETIRED`](Self::RETIRED) as the next word.
    // Always inlined, down to the CAS: left to the compiler the decision
    // stayed a call, and a direct decision took about twice as long
    // (docs/benchmarks/levers.md).
    #[inline(always)]
    pub(crate) fn update<R>(&self, mut decide: impl FnMut(u64) -> Step<R>) -> Option<R> {
        let mut current = self.load();
        let backoff = Backoff::new();
        loop {
            if current == Self::RETIRED {
                return None;
            }
            let step = decide(current);
            let Some(next) = step.next else {
                return Some(step.decision);
            };
            debug_assert_ne!(next, Self::RETIRED, "a rule stored the retired marker");
            // Relaxed on success and failure: the RMW on this single word is
            // totally ordered with every other RMW on it, and no other memory
            // depends on the value, so no acquire/release pairing is needed.
            match self
                .0
                .compare_exchange_weak(current, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Some(step.decision),
                Err(_) => {
                    // Spin, then decide on the word as it is now. The value
                    // the failed CAS returned is stale once the spin ends, and
                    // retrying with it fails for as long as another thread
                    // keeps winning: a thread could wait milliseconds for one
                    // decision (docs/benchmarks/levers.md).
                    backoff.spin();
                    current = self.load();
                }
            }
        }
    }
}

impl Retire for PackedWord {
    #[inline]
    fn is_retired(&self) -> bool {
        self.load() == Self::RETIRED
    }

    fn retire_if(&self, idle: impl Fn(&Self) -> bool) -> bool {
        let mut current = self.load();
        loop {
            // Judged on a copy, so the CAS below retires exactly the value judged.
            if current == Self::RETIRED || !idle(&PackedWord::new(current)) {
                return false;
            }
            // Relaxed: as in `update`; the word is the whole state, and a
            // request that reads the marker goes to the shard lock the
            // retiring thread holds, which orders everything else.
            match self.0.compare_exchange_weak(
                current,
                Self::RETIRED,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(actual) => current = actual,
            }
        }
    }

    fn retire_and_take(&self) -> Option<Self> {
        // Relaxed: one RMW; every update before it in the word's order is in
        // the value taken, every update after it reads the marker.
        let last = self.0.swap(Self::RETIRED, Ordering::Relaxed);
        (last != Self::RETIRED).then(|| PackedWord::new(last))
    }

    fn revive(&self, fresh: Self) {
        // Relaxed: only the shard lock holder revives, and requests that saw
        // the marker take that lock before looking again.
        self.0.store(fresh.load(), Ordering::Relaxed);
    }
}
