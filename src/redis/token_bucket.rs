//! [`TokenBucketScript`]: the token bucket (GCRA) as a Redis script.
//!
//! One string key holds the theoretical arrival time in microseconds; see
//! `scripts/token_bucket.lua` and the in-memory [`TokenBucketRule`].

use std::sync::LazyLock;

use redis::Script;

use super::algorithm::{
    MAX_SCRIPT_FIGURE, RedisAlgorithm, ScriptSpec, micros_ceil, script_source, sealed,
};
use crate::algorithm::Algorithm;
use crate::quota::Quota;
use crate::token_bucket::TokenBucketRule;

static SCRIPT: LazyLock<Script> =
    LazyLock::new(|| Script::new(script_source!("scripts/token_bucket.lua")));

/// The token bucket run in Redis: capacity `quota.burst()`, refilling
/// `quota.limit()` per `quota.window()`.
///
/// The interval between tokens is the in-memory one, `⌈window / limit⌉`,
/// rounded up to a whole microsecond; the time from empty to full is capped
/// at 2^50 µs (about 35 years).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenBucketScript;

impl RedisAlgorithm for TokenBucketScript {
    type Local = TokenBucketRule;
    const DEFAULT_PREFIX: &'static str = "tollgate:tb:";
}

impl sealed::Sealed for TokenBucketScript {
    fn spec(quota: &Quota) -> ScriptSpec {
        let interval = micros_ceil(TokenBucketRule::from_quota(quota).interval_nanos());
        let tolerance = quota
            .burst()
            .saturating_mul(interval)
            .min(MAX_SCRIPT_FIGURE.max(interval));
        let capacity = tolerance / interval;
        ScriptSpec {
            script: &SCRIPT,
            suffixes: &[""],
            params: vec![interval, tolerance],
            limit: capacity,
            max_cost: capacity,
        }
    }
}
