//! Limits shared by every process that talks to one Redis or Redis Cluster.
//!
//! Enabled by the `redis` feature. The four algorithms of the crate run as
//! server-side Lua scripts with the same semantics as their in-memory
//! namesakes, so the same requests at the same times get the same
//! [`Decision`](crate::Decision)s:
//!
//! | blocking                      | async (Tokio)                      | in memory |
//! |-------------------------------|------------------------------------|-----------|
//! | [`RedisTokenBucket`]          | [`AsyncRedisTokenBucket`]          | [`TokenBucket`](crate::TokenBucket) |
//! | [`RedisFixedWindow`]          | [`AsyncRedisFixedWindow`]          | [`FixedWindow`](crate::FixedWindow) |
//! | [`RedisSlidingWindowLog`]     | [`AsyncRedisSlidingWindowLog`]     | [`SlidingWindowLog`](crate::SlidingWindowLog) |
//! | [`RedisSlidingWindowCounter`] | [`AsyncRedisSlidingWindowCounter`] | [`SlidingWindowCounter`](crate::SlidingWindowCounter) |
//!
//! * **One round trip, atomic.** Each decision is one `EVALSHA` of a script
//!   hashed once; after `NOSCRIPT` (a restarted or flushed server) the
//!   script is loaded and the call repeated.
//! * **One clock.** Scripts read the server's `TIME` in microseconds, so the
//!   clocks of the clients cannot change a decision.
//! * **Bounded memory.** Every write sets a `PEXPIRE` equal to the time the
//!   key takes to return to a fresh state, rounded up to a millisecond.
//! * **Cluster ready.** A limiter key `k` is stored as `prefix{k}…`: the
//!   hash tag keeps all of a key's Redis keys on one slot.
//! * **Failures are decided and reported.** A [`FailurePolicy`] (fail
//!   closed, fail open, or fall back to an in-memory limiter) decides when
//!   Redis is unreachable or slower than the per-call timeout; the error is
//!   logged through `tracing` and returned by `check_detailed`.
//!
//! Figures are in whole microseconds: windows and token intervals are
//! rounded up to one, and so are retry and reset hints.

mod algorithm;
mod async_client;
mod blocking;
mod connect;
mod error;
mod failure_policy;
mod fixed_window;
mod keys;
mod limiter_core;
mod options;
mod outcome;
mod pool;
mod sliding_window_counter;
mod sliding_window_log;
mod token_bucket;

pub use algorithm::MAX_WINDOW;
pub use algorithm::RedisAlgorithm;
pub use async_client::AsyncRedisLimiter;
pub use blocking::RedisLimiter;
pub use connect::Connect;
pub use error::{BackendError, ConfigError, RedisLimitError};
pub use failure_policy::FailurePolicy;
pub use fixed_window::FixedWindowScript;
pub use options::{DEFAULT_TIMEOUT, MAX_TIMEOUT, MIN_TIMEOUT, RedisOptions};
pub use outcome::Outcome;
pub use sliding_window_counter::SlidingWindowCounterScript;
pub use sliding_window_log::SlidingWindowLogScript;
pub use token_bucket::TokenBucketScript;

/// A token bucket in Redis, called from blocking code.
pub type RedisTokenBucket<C = redis::Client> = RedisLimiter<TokenBucketScript, C>;
/// A fixed window in Redis, called from blocking code.
pub type RedisFixedWindow<C = redis::Client> = RedisLimiter<FixedWindowScript, C>;
/// An exact sliding window log in Redis, called from blocking code.
pub type RedisSlidingWindowLog<C = redis::Client> = RedisLimiter<SlidingWindowLogScript, C>;
/// A sliding window counter in Redis, called from blocking code.
pub type RedisSlidingWindowCounter<C = redis::Client> = RedisLimiter<SlidingWindowCounterScript, C>;

/// A token bucket in Redis, called from async code.
pub type AsyncRedisTokenBucket<C = redis::aio::ConnectionManager> =
    AsyncRedisLimiter<TokenBucketScript, C>;
/// A fixed window in Redis, called from async code.
pub type AsyncRedisFixedWindow<C = redis::aio::ConnectionManager> =
    AsyncRedisLimiter<FixedWindowScript, C>;
/// An exact sliding window log in Redis, called from async code.
pub type AsyncRedisSlidingWindowLog<C = redis::aio::ConnectionManager> =
    AsyncRedisLimiter<SlidingWindowLogScript, C>;
/// A sliding window counter in Redis, called from async code.
pub type AsyncRedisSlidingWindowCounter<C = redis::aio::ConnectionManager> =
    AsyncRedisLimiter<SlidingWindowCounterScript, C>;
