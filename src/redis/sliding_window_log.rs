//! [`SlidingWindowLogScript`]: the exact sliding log as a Redis script.
//!
//! Each key is a sorted set of `time:units` entries scored by admission
//! time plus a running total; see `scripts/sliding_window_log.lua` and the
//! in-memory [`SlidingWindowLogRule`].

use std::sync::LazyLock;

use redis::Script;

use super::algorithm::{
    MAX_SCRIPT_FIGURE, RedisAlgorithm, ScriptSpec, micros_ceil, script_source, sealed,
};
use crate::quota::Quota;
use crate::sliding_window_log::SlidingWindowLogRule;

static SCRIPT: LazyLock<Script> =
    LazyLock::new(|| Script::new(script_source!("scripts/sliding_window_log.lua")));

/// The sliding window log run in Redis: exactly `quota.limit()` per any
/// `quota.window()`-long span (the window rounded up to a whole microsecond).
///
/// Memory is one sorted-set entry per distinct admission time, at most
/// `limit` entries per key; limits saturate at 2^50.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlidingWindowLogScript;

impl RedisAlgorithm for SlidingWindowLogScript {
    type Local = SlidingWindowLogRule;
    const DEFAULT_PREFIX: &'static str = "tollgate:swl:";
}

impl sealed::Sealed for SlidingWindowLogScript {
    fn spec(quota: &Quota) -> ScriptSpec {
        let limit = quota.limit().min(MAX_SCRIPT_FIGURE);
        ScriptSpec {
            script: &SCRIPT,
            // Same length, different last byte: no two limiter keys share a Redis key.
            suffixes: &[":log", ":sum"],
            params: vec![micros_ceil(quota.window_nanos()), limit],
            limit,
            max_cost: limit,
        }
    }
}
