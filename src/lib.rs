//! Lock-free keyed rate limiters with an injected clock.
//!
//! `tollgate` decides, per key, whether a request goes through. Every
//! limiter implements one trait, [`RateLimiter`], so algorithms plug in
//! without changing callers:
//!
//! ```
//! use tollgate::{Quota, RateLimiter, TokenBucket};
//!
//! let limiter: TokenBucket = TokenBucket::new("100/minute".parse()?);
//! if limiter.allow("client-42") {
//!     // serve the request
//! }
//! let decision = limiter.check_n("client-42", 5)?;
//! println!("allowed={} remaining={} retry in {:?}",
//!     decision.allowed(), decision.remaining(), decision.retry_after());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Algorithms
//!
//! | limiter                   | state per key            | exact? | pick it when |
//! |---------------------------|--------------------------|--------|--------------|
//! | [`TokenBucket`]           | one `AtomicU64` (GCRA)   | yes    | bursts are fine, a smooth average matters |
//! | [`FixedWindow`]           | one `AtomicU64`          | per window | quotas are billed per calendar window |
//! | [`SlidingWindowCounter`]  | one `AtomicU64`          | approximate | a sliding window in O(1) memory |
//! | [`SlidingWindowLog`]      | a short per-key lock and a log | yes | the window must be exact, limits are small |
//!
//! # Design
//!
//! * Per-key states live in shards of open-addressing tables hashed with
//!   `foldhash`, each key kept in its [`Key::Stored`] form: short string
//!   keys inline in the table entry, so a hit reads no heap buffer. A
//!   lookup takes no lock and writes nothing shared: each thread reads its
//!   cached copy of the shard's current table. Writers
//!   (insertion, sweeps, moves to a resized table) work under the shard's
//!   lock and [`Retire`] a state before dropping or moving it, so no update
//!   can be lost or granted on a state that has left.
//! * Each packed algorithm is a pure function of `(old word, now, cost)`
//!   applied by one CAS loop in [`PackedWord`]; the clock is read once,
//!   before the loop.
//! * Time comes from a [`Clock`]: [`MonotonicClock`] (a calibrated TSC via
//!   `quanta`, published in nanoseconds every millisecond by one shared
//!   upkeep thread, so a reading is a load and a subtraction;
//!   [`MonotonicClock::exact`] reads the counter every
//!   time) by default, [`ManualClock`] in tests.
//! * Memory stays bounded: [`KeyedLimiter::evict_idle`], an amortised sweep
//!   on insertion, and an optional cap ([`KeyedOptions::max_keys`]).
//! * A [`Registry`] maps clients to named tiers of limiters.
//! * [`wait`] lets callers wait for capacity instead of being turned away:
//!   blocking and async `acquire`, and token-bucket reservations.
//! * With the `redis` feature, the `redis` module runs the same algorithms as
//!   Redis scripts, so one limit holds across every process sharing a Redis.
//!
//! Dependencies and why: `thread_local` (per-thread table caches, so a
//! lookup needs no reference-count update), `foldhash` (about a third cheaper
//! to hash short keys than SipHash, still seeded per map; see
//! [`KeyedOptions::robust_hash`] for keys that share a prefix), `quanta` (a clock
//! read at half the cost of `Instant::now`), `crossbeam-utils`
//! (`CachePadded`, `Backoff`), `strength_reduce` (each rule's divisions by
//! its own constants as multiplies). String keys are kept inline up to 23
//! bytes by a type of the crate's own ([`StoredStr`]): `compact_str`, which
//! did it before, reads a key's length back more slowly.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod algorithm;
mod clock;
mod counter;
mod decision;
mod direct;
mod divisor;
mod error;
pub mod fixed_window;
mod key;
mod keyed;
mod limiter;
mod log_entries;
mod map_hasher;
mod options;
mod packed_word;
#[cfg(not(tollgate_loom))]
mod per_thread;
mod placement;
mod quota;
mod quota_parse;
#[cfg(feature = "redis")]
pub mod redis;
mod registry;
mod retire;
mod short_bytes;
pub mod sliding_window_counter;
pub mod sliding_window_log;
mod state_map;
mod state_table;
mod store;
mod stored_str;
mod sync;
mod table_fill;
mod tag_group;
pub mod token_bucket;
pub mod wait;
mod window_tag;

/// The lock-free table under the keyed limiters, for the `loom` model of
/// its entry publication in `loom-tests/` (only under `--cfg tollgate_loom`;
/// not part of the API).
#[cfg(tollgate_loom)]
#[doc(hidden)]
pub mod loom_table {
    pub use crate::state_table::Table;
}

pub use algorithm::Algorithm;
pub use clock::{Clock, ClockUpkeep, ManualClock, MonotonicClock, SHARED_UPKEEP_INTERVAL};
pub use decision::Decision;
pub use direct::DirectLimiter;
pub use error::{InsufficientCapacity, RegistryError, UnknownTier};
pub use fixed_window::{FixedWindow, FixedWindowRule};
pub use key::{AsIs, Key, StoredAsIs};
pub use keyed::KeyedLimiter;
pub use limiter::RateLimiter;
pub use options::KeyedOptions;
pub use packed_word::PackedWord;
pub use quota::{Quota, QuotaError};
pub use registry::{Registry, RegistryBuilder};
pub use retire::Retire;
pub use sliding_window_counter::{SlidingWindowCounter, SlidingWindowCounterRule};
pub use sliding_window_log::{LogState, SlidingWindowLog, SlidingWindowLogRule};
pub use stored_str::StoredStr;
pub use token_bucket::{TokenBucket, TokenBucketRule};
pub use wait::{Acquire, Reservation, Reserve, WaitError};
