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
    if !denied {
        // Not a limiter: the least memory a lookup by key must touch.
        let (clock, floor) = (MonotonicClock::new(), KeyedFloor::new(keys));
        bench_keys(&mut g, "keyed_floor", keys, |k| floor.allow(&clock, k));
        // The exact logs hold every admission, so they get a short window.
        let log_quota = LOG.tollgate();
        let limiter: SlidingWindowLog<K> = SlidingWindowLog::new(log_quota);
        bench_keys(&mut g, "tollgate_sliding_log_64_per_ms", keys, |k| {
            limiter.allow(k)
        });
        let limiter = LOG.std_log::<K>();
        bench_keys(&mut g, "std_mutex_sliding_log_64_per_ms", keys, |k| {
            limiter.allow::<K>(k)
        });
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

/// Times first requests for never-seen keys; a fresh limiter every
/// `CHUNK` keys keeps memory bounded, and building it is not timed.
fn insertion(c: &mut Criterion) {
    const CHUNK: u64 = 100_000;
    fn timed<L>(iters: u64, make: impl Fn() -> L, allow: impl Fn(&L, u64) -> bool) -> Duration {
        let mut total = Duration::ZERO;
        let mut done = 0;
        while done < iters {
            let n = CHUNK.min(iters - done);
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
    let spec = Spec::DEEP_BUCKET;
    let quota = spec.tollgate();
    let window = Spec::WIDE_WINDOW.tollgate();
    let mut g = c.benchmark_group("insert_new_u64");
    g.bench_function("tollgate_token_bucket", |b| {
        b.iter_custom(|iters| timed(iters, || TokenBucket::<u64>::new(quota), |l, k| l.allow(&k)))
    });
    g.bench_function("tollgate_fixed_window", |b| {
        b.iter_custom(|iters| {
            timed(
                iters,
                || FixedWindow::<u64>::new(window),
                |l, k| l.allow(&k),
            )
        })
    });
    g.bench_function("governor_keyed", |b| {
        b.iter_custom(|iters| {
            timed(
                iters,
                || governor_keyed::<u64>(spec),
                |l, k| l.check_key(&k).is_ok(),
            )
        })
    });
    g.bench_function("std_mutex_token_bucket", |b| {
        b.iter_custom(|iters| timed(iters, || spec.std_bucket::<u64>(), |l, k| l.allow(&k)))
    });
    g.finish();
    let mut g = c.benchmark_group("insert_new_string");
    g.bench_function("tollgate_token_bucket", |b| {
        b.iter_custom(|iters| {
            timed(
                iters,
                || TokenBucket::<String>::new(quota),
                |l, k| l.allow(&format!("client-{k:08}")),
            )
        })
    });
    g.bench_function("governor_keyed", |b| {
        b.iter_custom(|iters| {
            timed(
                iters,
                || governor_keyed::<String>(spec),
                |l, k| l.check_key(&format!("client-{k:08}")).is_ok(),
            )
        })
    });
    g.bench_function("std_mutex_token_bucket", |b| {
        b.iter_custom(|iters| {
            timed(
                iters,
                || spec.std_bucket::<String>(),
                |l, k| l.allow(&format!("client-{k:08}")),
            )
        })
    });
    g.finish();
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
