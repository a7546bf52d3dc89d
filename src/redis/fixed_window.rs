//! [`FixedWindowScript`]: the fixed window as a Redis script.
//!
//! One hash per key holds the window number and the units used in it; see
//! `scripts/fixed_window.lua` and the in-memory [`FixedWindowRule`].

use std::sync::LazyLock;

use redis::Script;

use super::algorithm::{RedisAlgorithm, ScriptSpec, micros_ceil, script_source, sealed};
use crate::algorithm::Algorithm;
use crate::fixed_window::FixedWindowRule;
use crate::quota::Quota;

static SCRIPT: LazyLock<Script> =
    LazyLock::new(|| Script::new(script_source!("scripts/fixed_window.lua")));

/// The fixed window run in Redis: `quota.limit()` per window, windows
/// aligned to multiples of `quota.window()` (rounded up to a whole
/// microsecond) since the Unix epoch of the server's clock.
///
/// Limits saturate at `2^32 - 1`, as in memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FixedWindowScript;

impl RedisAlgorithm for FixedWindowScript {
    type Local = FixedWindowRule;
    const DEFAULT_PREFIX: &'static str = "tollgate:fw:";
}

impl sealed::Sealed for FixedWindowScript {
    fn spec(quota: &Quota) -> ScriptSpec {
        let limit = FixedWindowRule::from_quota(quota).limit();
        ScriptSpec {
            script: &SCRIPT,
            suffixes: &[""],
            params: vec![micros_ceil(quota.window_nanos()), limit],
            limit,
            max_cost: limit,
        }
    }
}
