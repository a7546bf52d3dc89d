//! [`RedisAlgorithm`]: what a server-side script needs to know about one
//! rate-limiting algorithm.

use std::time::Duration;

use redis::Script;

use crate::algorithm::Algorithm;

/// The shared opening of every script: time, cost, integer helpers, expiry.
macro_rules! script_source {
    ($body:literal) => {
        concat!(
            include_str!("scripts/prelude.lua"),
            "\n",
            include_str!($body)
        )
    };
}
pub(crate) use script_source;

/// The largest figure a script handles, so sums of a few of them stay below
/// 2^53, where Lua's doubles stop being exact integers.
pub(crate) const MAX_SCRIPT_FIGURE: u64 = 1 << 50;

/// The longest quota window a Redis limiter takes: 2^50 microseconds (about
/// 35.7 years), the scripts' largest figure. A longer window would be cut to
/// it, which would let a key spend again early; such a quota is a
/// [`ConfigError::WindowTooLong`](super::ConfigError::WindowTooLong).
pub const MAX_WINDOW: Duration = Duration::from_micros(MAX_SCRIPT_FIGURE);

/// One algorithm run by a Redis script; implemented by the marker types
/// [`TokenBucketScript`](super::TokenBucketScript),
/// [`FixedWindowScript`](super::FixedWindowScript),
/// [`SlidingWindowLogScript`](super::SlidingWindowLogScript) and
/// [`SlidingWindowCounterScript`](super::SlidingWindowCounterScript).
pub trait RedisAlgorithm: sealed::Sealed + Send + Sync + 'static {
    /// The in-memory rule of the same name, used by
    /// [`FailurePolicy::Fallback`](super::FailurePolicy::Fallback).
    type Local: Algorithm;

    /// The key prefix used unless another is configured.
    const DEFAULT_PREFIX: &'static str;
}

pub(crate) mod sealed {
    /// Keeps [`RedisAlgorithm`](super::RedisAlgorithm) closed: the limiters
    /// rely on the exact reply shape of the scripts in this crate.
    pub trait Sealed {
        /// The script and its parameters for one quota.
        fn spec(quota: &crate::quota::Quota) -> super::ScriptSpec;
    }
}

/// Everything a limiter sends with each call, fixed at construction.
#[derive(Clone, Debug)]
pub struct ScriptSpec {
    /// The script, hashed once.
    pub(crate) script: &'static Script,
    /// Redis key suffixes after the tagged limiter key, one per script key.
    pub(crate) suffixes: &'static [&'static str],
    /// The algorithm's parameters, `ARGV[4]` onwards.
    pub(crate) params: Vec<u64>,
    /// The limit reported in every decision.
    pub(crate) limit: u64,
    /// The most units one call may spend.
    pub(crate) max_cost: u64,
}

impl ScriptSpec {
    /// The limit reported in every decision.
    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }
}

/// `nanos` in whole microseconds, rounded up, at least 1 and at most
/// [`MAX_SCRIPT_FIGURE`].
pub(crate) fn micros_ceil(nanos: u64) -> u64 {
    nanos.div_ceil(1000).clamp(1, MAX_SCRIPT_FIGURE)
}
