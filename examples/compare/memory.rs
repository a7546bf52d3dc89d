//! Bytes per tracked key, measured by the counting global allocator: the
//! live heap a limiter holds after tracking `n` keys, divided by `n`. It
//! includes the map's empty slots, control bytes and shard headers, and for
//! `String` keys the keys' own heap buffers.

use std::hash::Hash;
use std::time::Duration;

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tollgate::{
    FixedWindow, KeyedOptions, MonotonicClock, RateLimiter, SlidingWindowCounter, SlidingWindowLog,
    TokenBucket,
};

use crate::support::contenders::{Spec, governor_keyed};
use crate::support::keys::{string_keys, u64_keys};

#[global_allocator]
static GLOBAL: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

/// A log quota whose entries outlive the measurement.
const LONG_LOG: Spec = Spec {
    limit: 64,
    window: Duration::from_secs(3600),
    burst: 64,
};

/// One measurement.
#[derive(Clone, Debug)]
pub struct Footprint {
    /// The implementation and key type.
    pub name: String,
    /// Keys tracked.
    pub keys: usize,
    /// Live heap bytes per key.
    pub bytes_per_key: f64,
}

/// Live heap bytes `build` leaves behind once it has tracked `keys`.
fn measure<K, L>(name: &str, keys: &[K], build: impl FnOnce(&[K]) -> (L, usize)) -> Footprint {
    let region = Region::new(GLOBAL);
    let (limiter, tracked) = build(keys);
    let change = region.change();
    // A `realloc` already moves `bytes_allocated` (growth) or
    // `bytes_deallocated` (shrinking); `bytes_reallocated` repeats it.
    let live = change.bytes_allocated as f64 - change.bytes_deallocated as f64;
    assert_eq!(tracked, keys.len(), "{name}: every key must stay tracked");
    drop(limiter);
    Footprint {
        name: name.to_owned(),
        keys: keys.len(),
        bytes_per_key: live / keys.len() as f64,
    }
}

/// Every algorithm (and governor, for reference) on `keys`.
fn all<K: tollgate::Key + Hash + Eq + Clone + 'static>(
    kind: &str,
    keys: &[K],
    out: &mut Vec<Footprint>,
) {
    let bucket = Spec::DEEP_BUCKET.tollgate();
    let window = Spec::WIDE_WINDOW.tollgate();
    fn track<L: RateLimiter<K>, K>(
        limiter: L,
        keys: &[K],
        len: impl Fn(&L) -> usize,
    ) -> (L, usize) {
        for key in keys {
            assert!(limiter.allow(key), "a fresh key must pass");
        }
        let n = len(&limiter);
        (limiter, n)
    }
    out.push(measure(
        &format!("tollgate TokenBucket<{kind}>"),
        keys,
        |keys| track(TokenBucket::<K>::new(bucket), keys, |l| l.len()),
    ));
    out.push(measure(
        &format!("tollgate TokenBucket<{kind}>, compact tables"),
        keys,
        |keys| {
            let options = KeyedOptions::new().compact_tables(true);
            let limiter = TokenBucket::<K>::with_options(bucket, MonotonicClock::new(), options);
            track(limiter, keys, |l| l.len())
        },
    ));
    out.push(measure(
        &format!("tollgate FixedWindow<{kind}>"),
        keys,
        |keys| track(FixedWindow::<K>::new(window), keys, |l| l.len()),
    ));
    out.push(measure(
        &format!("tollgate SlidingWindowCounter<{kind}>"),
        keys,
        |keys| track(SlidingWindowCounter::<K>::new(window), keys, |l| l.len()),
    ));
    out.push(measure(
        &format!("tollgate SlidingWindowLog<{kind}> (1 entry)"),
        keys,
        |keys| {
            track(SlidingWindowLog::<K>::new(LONG_LOG.tollgate()), keys, |l| {
                l.len()
            })
        },
    ));
    out.push(measure(&format!("governor keyed <{kind}>"), keys, |keys| {
        let limiter = governor_keyed::<K>(Spec::DEEP_BUCKET);
        for key in keys {
            assert!(limiter.check_key(key).is_ok(), "a fresh key must pass");
        }
        let n = limiter.len();
        (limiter, n)
    }));
    out.push(measure(
        &format!("std Mutex<HashMap> bucket <{kind}>"),
        keys,
        |keys| {
            let limiter = Spec::DEEP_BUCKET.std_bucket::<K>();
            for key in keys {
                assert!(limiter.allow::<K>(key), "a fresh key must pass");
            }
            let n = limiter.len();
            (limiter, n)
        },
    ));
}

/// Footprints at each of `sizes` keys, `u64` keys then `String` keys.
pub fn footprints(sizes: &[usize]) -> Vec<Footprint> {
    let mut out = Vec::new();
    for &n in sizes {
        all("u64", &u64_keys(n), &mut out);
        all("String", &string_keys(n), &mut out);
    }
    out
}
