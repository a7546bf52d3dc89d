//! One quota, built for every implementation under comparison.

use std::hash::Hash;
use std::num::NonZeroU32;
use std::time::Duration;

use super::baseline::{
    ClassicFixedWindow, ClassicSlidingLog, ClassicTokenBucket, ParkingLotBucket, StdMutexBucket,
    StdMutexLog, StdMutexWindow,
};

/// `limit` requests per `window`, up to `burst` at once.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// Requests per window.
    pub limit: u64,
    /// The window.
    pub window: Duration,
    /// Most requests at once (the bucket's capacity).
    pub burst: u64,
}

impl Spec {
    /// A bucket no benchmark can empty: a billion tokens, one more a second.
    ///
    /// The slow refill keeps every key in debt between visits. With a fast
    /// refill a key's bucket would be full again before its next visit, the
    /// key idle, and the automatic sweep would evict it: the benchmark would
    /// time re-insertion instead of the allowed path.
    pub const DEEP_BUCKET: Spec = Spec {
        limit: 1,
        window: Duration::from_secs(1),
        burst: 1_000_000_000,
    };

    /// A window no benchmark can fill: a billion a second per key.
    pub const WIDE_WINDOW: Spec = Spec {
        limit: 1_000_000_000,
        window: Duration::from_secs(1),
        burst: 1_000_000_000,
    };

    /// A quota every key exhausts at once: one request an hour.
    pub const STINGY: Spec = Spec {
        limit: 1,
        window: Duration::from_secs(3600),
        burst: 1,
    };

    /// The crate's quota.
    pub fn tollgate(&self) -> tollgate::Quota {
        tollgate::Quota::new(self.limit, self.window)
            .expect("valid quota")
            .with_burst(self.burst)
    }

    /// governor's quota: one cell per `window / limit`, bursts of `burst`.
    pub fn governor(&self) -> governor::Quota {
        let period = self.window / u32::try_from(self.limit).expect("limit fits u32");
        governor::Quota::with_period(period.max(Duration::from_nanos(1)))
            .expect("non-zero period")
            .allow_burst(
                NonZeroU32::new(u32::try_from(self.burst).expect("burst fits u32"))
                    .expect("non-zero burst"),
            )
    }

    /// A full `ratelimit` bucket.
    pub fn ratelimit(&self) -> ratelimit::Ratelimiter {
        ratelimit::Ratelimiter::builder(self.limit)
            .period(self.window)
            .max_tokens(self.burst)
            .initial_available(self.burst)
            .build()
            .expect("valid ratelimit quota")
    }

    /// The std-mutex token bucket.
    pub fn std_bucket<K: Hash + Eq + Send>(&self) -> StdMutexBucket<K> {
        StdMutexBucket::new(self.classic_bucket())
    }

    /// The parking_lot-mutex token bucket.
    pub fn parking_lot_bucket<K: Hash + Eq + Send>(&self) -> ParkingLotBucket<K> {
        ParkingLotBucket::new(self.classic_bucket())
    }

    /// The std-mutex fixed window.
    pub fn std_window<K: Hash + Eq + Send>(&self) -> StdMutexWindow<K> {
        StdMutexWindow::new(ClassicFixedWindow::new(self.limit, self.window))
    }

    /// The std-mutex sliding log.
    pub fn std_log<K: Hash + Eq + Send>(&self) -> StdMutexLog<K> {
        let limit = usize::try_from(self.limit).expect("limit fits usize");
        StdMutexLog::new(ClassicSlidingLog::new(limit, self.window))
    }

    fn classic_bucket(&self) -> ClassicTokenBucket {
        ClassicTokenBucket::new(self.limit, self.window, self.burst)
    }
}

/// governor's keyed limiter with its defaults (DashMap, default hasher and clock).
pub type GovernorKeyed<K> = governor::DefaultKeyedRateLimiter<K>;
/// governor's direct limiter with its defaults.
pub type GovernorDirect = governor::DefaultDirectRateLimiter;

/// governor keyed with its defaults.
pub fn governor_keyed<K: Hash + Eq + Clone>(spec: Spec) -> GovernorKeyed<K> {
    governor::RateLimiter::keyed(spec.governor())
}

/// governor direct with its defaults.
pub fn governor_direct(spec: Spec) -> GovernorDirect {
    governor::RateLimiter::direct(spec.governor())
}
