//! [`SlidingWindowCounterScript`]: the two-counter sliding window as a Redis
//! script.
//!
//! One hash per key holds the current window number and the two counts; see
//! `scripts/sliding_window_counter.lua` and the in-memory
//! [`SlidingWindowCounterRule`].

use std::sync::LazyLock;

use redis::Script;

use super::algorithm::{
    MAX_SCRIPT_FIGURE, RedisAlgorithm, ScriptSpec, micros_ceil, script_source, sealed,
};
use crate::algorithm::Algorithm;
use crate::quota::Quota;
use crate::sliding_window_counter::SlidingWindowCounterRule;

static SCRIPT: LazyLock<Script> =
    LazyLock::new(|| Script::new(script_source!("scripts/sliding_window_counter.lua")));

/// The sliding window counter run in Redis: about `quota.limit()` per any
/// `quota.window()`-long span.
///
/// The test `prev·(W − e) + (cur + n)·W ≤ limit·W` is exact as long as
/// `limit·W` fits a double's integers; the script counts time in
/// microseconds, or in the smallest power-of-ten multiple of them that keeps
/// `limit·W ≤ 2^50` (only windows longer than about 2^50 µs / limit, e.g.
/// over about 67 s at a limit of 2^24 − 2, need a coarser unit). Retry and reset
/// figures are rounded up to a whole unit. Limits saturate at `2^24 − 2`, as in
/// memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlidingWindowCounterScript;

impl RedisAlgorithm for SlidingWindowCounterScript {
    type Local = SlidingWindowCounterRule;
    const DEFAULT_PREFIX: &'static str = "tollgate:swc:";
}

impl sealed::Sealed for SlidingWindowCounterScript {
    fn spec(quota: &Quota) -> ScriptSpec {
        let limit = SlidingWindowCounterRule::from_quota(quota).limit();
        let window_micros = micros_ceil(quota.window_nanos());
        let mut unit = 1u64;
        while limit.saturating_mul(window_micros.div_ceil(unit)) > MAX_SCRIPT_FIGURE {
            unit *= 10;
        }
        ScriptSpec {
            script: &SCRIPT,
            suffixes: &[""],
            params: vec![window_micros.div_ceil(unit), limit, unit],
            limit,
            max_cost: limit,
        }
    }
}
