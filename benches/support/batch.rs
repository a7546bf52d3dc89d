//! One timed batch of decisions on keys picked at random: the unit the
//! examples that take turns between contenders measure in.

use std::hint::black_box;
use std::time::Instant;

use super::keys::Pick;

/// Nanoseconds per decision over `decisions` decisions on key indices
/// below `keys`, after an untimed pass of `keys` decisions, so the
/// contender's lines are back in the caches; and how many were admitted.
/// Called once per contender, so each decision is inlined into its own
/// loop rather than reached through a function pointer.
#[inline(always)]
pub fn batch(
    keys: usize,
    decisions: u64,
    pick: &mut Pick,
    allow: impl Fn(usize) -> bool,
) -> (f64, u64) {
    for _ in 0..keys {
        black_box(allow(pick.below(keys)));
    }
    let mut admitted = 0;
    let began = Instant::now();
    for _ in 0..decisions {
        admitted += u64::from(allow(black_box(pick.below(keys))));
    }
    (
        began.elapsed().as_nanos() as f64 / decisions as f64,
        admitted,
    )
}
