//! `KeyedOptions::compact_tables`: measured heap per tracked key, with the
//! default tables and the compact ones, small and large.
//!
//! One shard, so the table sizes follow from the key count alone and not
//! from the hash seed; and 64 shards, whose 1,560 or so keys each all sit
//! at the same step of their tables' growth whatever the seed. The whole measurement is one test: the counting
//! allocator sees every thread, so no other test may run beside it.

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tollgate::{KeyedOptions, ManualClock, Quota, RateLimiter, TokenBucket};

#[global_allocator]
static GLOBAL: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

/// Live heap bytes per key of a one-shard `u64` token bucket after `n` keys.
fn bytes_per_key(n: u64, compact: bool) -> f64 {
    bytes_per_key_in(n, KeyedOptions::new().shards(1).compact_tables(compact))
}

/// Live heap bytes per key of a `u64` token bucket with `options` after `n`
/// keys.
fn bytes_per_key_in(n: u64, options: KeyedOptions) -> f64 {
    let region = Region::new(GLOBAL);
    let limiter: TokenBucket<u64, _> =
        TokenBucket::with_options(Quota::per_second(10), ManualClock::new(), options);
    for key in 0..n {
        assert!(limiter.allow(&key), "a new key passes");
    }
    assert_eq!(limiter.len() as u64, n, "every key stays tracked");
    let change = region.change();
    // A `realloc` already moves `bytes_allocated` (growth) or
    // `bytes_deallocated` (shrinking); `bytes_reallocated` repeats it.
    let live = change.bytes_allocated as f64 - change.bytes_deallocated as f64;
    drop(limiter);
    live / n as f64
}

#[test]
fn compact_tables_hold_the_same_keys_in_less_memory() {
    // A 17-byte slot (tag and entry): at most 3 slots per key in a small
    // default table, 2 in a compact one, plus the shard's fixed overhead.
    // One shard's table turns compact by default past 16,384 slots.
    for n in [2_000, 4_000, 4_500] {
        let roomy = bytes_per_key(n, false);
        let compact = bytes_per_key(n, true);
        assert!(
            roomy <= 56.0,
            "{n} keys: {roomy:.1} bytes per key by default"
        );
        assert!(
            compact <= 36.0,
            "{n} keys: {compact:.1} bytes per key compact"
        );
        assert!(
            compact < roomy,
            "{n} keys: compact {compact:.1} against {roomy:.1} bytes per key"
        );
    }
    for n in [10_000, 50_000, 100_000] {
        for compact in [false, true] {
            let bytes = bytes_per_key(n, compact);
            assert!(
                bytes <= 36.0,
                "{n} keys: {bytes:.1} bytes per key (compact setting {compact})"
            );
        }
    }
    // Four shards per CPU on a 16-core machine: 64 shards of about 1,560 keys
    // each at 100,000 keys. Their tables turn compact as 8 shards' would
    // (27.5 bytes per key; 32.9 when each shard switched at 16,384 slots).
    let many_shards = bytes_per_key_in(100_000, KeyedOptions::new().shards(64));
    assert!(
        many_shards <= 30.0,
        "100,000 keys over 64 shards: {many_shards:.1} bytes per key"
    );
}
