//! Single-thread cost of one decision, for every implementation and case.
//!
//! Run with `cargo bench --bench single_thread`; `compare` prints the same
//! comparisons as ratios in one short run.

use std::hash::Hash;
use std::hint::black_box;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, criterion_group, criterion_main};
use tollgate::{
    Clock, DirectLimiter, FixedWindow, ManualClock, MonotonicClock, RateLimiter,
    SlidingWindowCounter, SlidingWindowLog, TokenBucket, TokenBucketRule,
};

mod support;

use support::contenders::{Spec, governor_direct, governor_keyed};
use support::floor;
use support::keyed_floor::{FloorKey, KeyedFloor};
use support::keys::{Pick, string_keys, u64_keys};

/// A log quota small enough that the exact log stays short per key.
const LOG: Spec = Spec {
    limit: 64,
    window: Duration::from_millis(1),
    burst: 64,
};

/// Times `allow` on keys picked from `keys`.
fn bench_keys<K>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    keys: &[K],
    allow: impl Fn(&K) -> bool,
) {
    for key in keys {
        allow(key); // every key is tracked before timing starts
    }
    let mut pick = Pick::new(0x5eed);
    g.bench_function(id, |b| {
        b.iter(|| allow(black_box(&keys[pick.below(keys.len())])))
    });
}

/// Every keyed implementation on `keys`, on the allowed path (`denied`
/// false) or with every key exhausted.
fn keyed_case<K: tollgate::Key + FloorKey + Hash + Eq + Clone + 'static>(
    c: &mut Criterion,
    name: &str,
    keys: &[K],
    denied: bool,
) {
    let (bucket, window) = if denied {
        (Spec::STINGY, Spec::STINGY)
    } else {
        (Spec::DEEP_BUCKET, Spec::WIDE_WINDOW)
    };
    let mut g = c.benchmark_group(name);
    let quota = bucket.tollgate();
    {
        let limiter: TokenBucket<K> = TokenBucket::new(quota);
        bench_keys(&mut g, "tollgate_token_bucket", keys, |k| limiter.allow(k));
    }
    {
        // A counter read per decision instead of the default's upkept load.
        let limiter: TokenBucket<K> = TokenBucket::with_clock(quota, MonotonicClock::exact());
        bench_keys(&mut g, "tollgate_token_bucket_exact_clock", keys, |k| {
            limiter.allow(k)
        });
        let limiter: FixedWindow<K> =
            FixedWindow::with_clock(window.tollgate(), MonotonicClock::exact());
        bench_keys(&mut g, "tollgate_fixed_window_exact_clock", keys, |k| {
            limiter.allow(k)
        });
    }
    {
        let limiter: TokenBucket<K, ManualClock> =
            TokenBucket::with_clock(quota, ManualClock::new());
        bench_keys(&mut g, "tollgate_token_bucket_manual_clock", keys, |k| {
            limiter.allow(k)
        });
    }
    {
        let limiter: FixedWindow<K> = FixedWindow::new(window.tollgate());
        bench_keys(&mut g, "tollgate_fixed_window", keys, |k| limiter.allow(k));
    }
    {
        let limiter: SlidingWindowCounter<K> = SlidingWindowCounter::new(window.tollgate());
        bench_keys(&mut g, "tollgate_sliding_counter", keys, |k| {
            limiter.allow(k)
        });
    }
    {
        let limiter = governor_keyed::<K>(bucket);
        bench_keys(&mut g, "governor_keyed", keys, |k| {
            limiter.check_key(k).is_ok()
        });
    }
    {
        let limiter = bucket.std_bucket::<K>();
        bench_keys(&mut g, "std_mutex_token_bucket", keys, |k| {
            limiter.allow::<K>(k)
        });
    }
    {
        let limiter = bucket.parking_lot_bucket::<K>();
        bench_keys(&mut g, "parking_lot_token_bucket", keys, |k| {
            limiter.allow::<K>(k)
        });
    }
    {
        let limiter = window.std_window::<K>();
        bench_keys(&mut g, "std_mutex_fixed_window", keys, |k| {
            limiter.allow::<K>(k)
        });
    }
    {
        // The exact logs hold every admission, so the allowed path gives them
        // a short window; denied, they share the stingy quota (one entry).
        let (log, suffix) = if denied {
            (Spec::STINGY, "")
        } else {
            (LOG, "_64_per_ms")
        };
        let limiter: SlidingWindowLog<K> = SlidingWindowLog::new(log.tollgate());
        bench_keys(
            &mut g,
            &format!("tollgate_sliding_log{suffix}"),
            keys,
            |k| limiter.allow(k),
        );
        let limiter = log.std_log::<K>();
        bench_keys(
            &mut g,
            &format!("std_mutex_sliding_log{suffix}"),
            keys,
            |k| limiter.allow::<K>(k),
        );
    }
    if !denied {
        // Not a limiter: the least memory a lookup by key must touch.
        let (clock, floor) = (MonotonicClock::new(), KeyedFloor::new(keys));
        bench_keys(&mut g, "keyed_floor", keys, |k| floor.allow(&clock, k));
    }
    g.finish();
}

fn hot_key(c: &mut Criterion) {
    keyed_case(c, "hot_key_string", &string_keys(1), false);
}

fn keys_10k(c: &mut Criterion) {
    keyed_case(c, "keys_10k_string", &string_keys(10_000), false);
    keyed_case(c, "keys_10k_u64", &u64_keys(10_000), false);
}

fn keys_1m(c: &mut Criterion) {
    keyed_case(c, "keys_1m_string", &string_keys(1_000_000), false);
    keyed_case(c, "keys_1m_u64", &u64_keys(1_000_000), false);
}

fn denied(c: &mut Criterion) {
    keyed_case(c, "denied_10k_string", &string_keys(10_000), true);
}

/// Fresh limiters get this many never-seen keys each, so memory stays
/// bounded however many iterations criterion asks for.
const INSERT_CHUNK: u64 = 100_000;

/// Times `iters` first requests, `INSERT_CHUNK` keys per fresh limiter from
/// `make`; building the limiters is not timed.
fn time_insertions<L>(
    iters: u64,
    make: impl Fn() -> L,
    allow: impl Fn(&L, u64) -> bool,
) -> Duration {
    let mut total = Duration::ZERO;
    let mut done = 0;
    while done < iters {
        let n = INSERT_CHUNK.min(iters - done);
        let limiter = make();
        let began = Instant::now();
        for key in done..done + n {
            black_box(allow(&limiter, black_box(key)));
        }
        total += began.elapsed();
        done += n;
    }
    total
}

/// One implementation's first requests, as [`time_insertions`] times them.
fn bench_insertions<L>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    make: impl Fn() -> L,
    allow: impl Fn(&L, u64) -> bool,
) {
    g.bench_function(id, |b| {
        b.iter_custom(|iters| time_insertions(iters, &make, &allow))
    });
}

/// First requests for never-seen keys on every keyed implementation, the
/// `n`th key made by `key` inside the timed loop (for `String` keys a
/// `format!`, which every contender pays alike).
fn insert_case<K: tollgate::Key + Hash + Eq + Clone + 'static>(
    c: &mut Criterion,
    name: &str,
    key: fn(u64) -> K,
) {
    let (bucket, window) = (Spec::DEEP_BUCKET, Spec::WIDE_WINDOW);
    let mut g = c.benchmark_group(name);
    bench_insertions(
        &mut g,
        "tollgate_token_bucket",
        || TokenBucket::<K>::new(bucket.tollgate()),
        |l, n| l.allow(&key(n)),
    );
    bench_insertions(
        &mut g,
        "tollgate_fixed_window",
        || FixedWindow::<K>::new(window.tollgate()),
        |l, n| l.allow(&key(n)),
    );
    bench_insertions(
        &mut g,
        "tollgate_sliding_counter",
        || SlidingWindowCounter::<K>::new(window.tollgate()),
        |l, n| l.allow(&key(n)),
    );
    // The logs get the windows' quota too: each new key logs one entry,
    // and none expires while the case runs (the allowed path's short log
    // window would have the automatic sweep evict keys as it went).
    bench_insertions(
        &mut g,
        "tollgate_sliding_log",
        || SlidingWindowLog::<K>::new(window.tollgate()),
        |l, n| l.allow(&key(n)),
    );
    bench_insertions(
        &mut g,
        "governor_keyed",
        || governor_keyed::<K>(bucket),
        |l, n| l.check_key(&key(n)).is_ok(),
    );
    bench_insertions(
        &mut g,
        "std_mutex_token_bucket",
        || bucket.std_bucket::<K>(),
        |l, n| l.allow::<K>(&key(n)),
    );
    bench_insertions(
        &mut g,
        "parking_lot_token_bucket",
        || bucket.parking_lot_bucket::<K>(),
        |l, n| l.allow::<K>(&key(n)),
    );
    bench_insertions(
        &mut g,
        "std_mutex_fixed_window",
        || window.std_window::<K>(),
        |l, n| l.allow::<K>(&key(n)),
    );
    bench_insertions(
        &mut g,
        "std_mutex_sliding_log",
        || window.std_log::<K>(),
        |l, n| l.allow::<K>(&key(n)),
    );
    g.finish();
}

fn insertion(c: &mut Criterion) {
    insert_case(c, "insert_new_u64", |n| n);
    insert_case(c, "insert_new_string", |n| format!("client-{n:08}"));
}

/// One key, no map: the crate's direct limiter, its peers and the floor
/// they stand on (one clock read plus one uncontended CAS loop).
fn direct(c: &mut Criterion) {
    let spec = Spec::DEEP_BUCKET;
    let mut g = c.benchmark_group("direct");
    let limiter = DirectLimiter::<TokenBucketRule>::new(spec.tollgate());
    g.bench_function("tollgate_token_bucket", |b| {
        b.iter(|| limiter.check_n(black_box(1)).is_ok_and(|d| d.allowed()))
    });
    {
        let limiter = DirectLimiter::<TokenBucketRule, _>::with_clock(
            spec.tollgate(),
            MonotonicClock::exact(),
        );
        g.bench_function("tollgate_token_bucket_exact_clock", |b| {
            b.iter(|| limiter.check_n(black_box(1)).is_ok_and(|d| d.allowed()))
        });
        let clock = MonotonicClock::exact();
        let word = AtomicU64::new(0);
        g.bench_function("floor_clock_read_plus_cas_exact_clock", |b| {
            b.iter(|| floor::clock_and_cas(&clock, &word, black_box(1)))
        });
    }
    let limiter = governor_direct(spec);
    g.bench_function("governor_direct", |b| b.iter(|| limiter.check().is_ok()));
    let limiter = spec.ratelimit();
    g.bench_function("ratelimit", |b| b.iter(|| limiter.try_wait().is_ok()));
    let clock = MonotonicClock::new();
    let word = AtomicU64::new(0);
    g.bench_function("floor_clock_read_plus_cas", |b| {
        b.iter(|| floor::clock_and_cas(&clock, &word, black_box(1)))
    });
    g.finish();

    let mut g = c.benchmark_group("floors");
    g.bench_function("monotonic_clock", |b| b.iter(|| clock.now_nanos()));
    let exact = MonotonicClock::exact();
    g.bench_function("monotonic_clock_exact", |b| b.iter(|| exact.now_nanos()));
    let quanta = quanta::Clock::new();
    g.bench_function("quanta_raw", |b| b.iter(|| quanta.raw()));
    g.bench_function("quanta_now", |b| b.iter(|| quanta.now()));
    g.bench_function("instant_now", |b| b.iter(Instant::now));
    g.bench_function("cas_loop", |b| b.iter(|| floor::cas(&word, black_box(7))));
    g.finish();
}

criterion_group! {
    name = benches;
    // No plots: criterion's need system fonts; `examples/compare` draws the chart.
    config = Criterion::default()
        .without_plots()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    targets = direct, hot_key, keys_10k, denied, insertion, keys_1m
}
criterion_main!(benches);
