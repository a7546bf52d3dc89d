//! Multi-thread cost: 1, 2, 4 and 8 threads share one limiter, on one hot
//! key, on 10,000 keys, and making first requests for new keys; and share
//! one registry of tiers over 10,000 clients. Criterion
//! reports wall time per decision of all threads together, the inverse of
//! total throughput.

use std::hash::Hash;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, criterion_group, criterion_main};
use tollgate::{RateLimiter, TokenBucket};

mod support;

use support::contenders::{Spec, governor_keyed};
use support::keys::string_keys;
use support::registry_baseline::{OTHER_TIER, locked_two_tier_registry, two_tier_registry};
use support::threads::{Run, run_new_keys, run_ops};

const THREADS: [usize; 4] = [1, 2, 4, 8];

fn sweep<K: Sync>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    keys: &[K],
    allow: impl Fn(&K) -> bool + Sync,
) {
    for &threads in &THREADS {
        g.bench_with_input(BenchmarkId::new(id, threads), &threads, |b, &threads| {
            b.iter_custom(|iters| {
                let run = run_ops(threads, iters.div_ceil(threads as u64), keys, &allow);
                // Everything fits the generous quota: a denial is a bug.
                assert_eq!(
                    run.admitted, run.decisions,
                    "{id} denied under a generous quota"
                );
                run.elapsed
            })
        });
    }
}

fn case<K: tollgate::Key + Hash + Eq + Clone + 'static>(c: &mut Criterion, name: &str, keys: &[K]) {
    let spec = Spec::DEEP_BUCKET;
    let mut g = c.benchmark_group(name);
    let limiter: TokenBucket<K> = TokenBucket::new(spec.tollgate());
    sweep(&mut g, "tollgate_token_bucket", keys, |k| limiter.allow(k));
    let limiter = governor_keyed::<K>(spec);
    sweep(&mut g, "governor_keyed", keys, |k| {
        limiter.check_key(k).is_ok()
    });
    let limiter = spec.std_bucket::<K>();
    sweep(&mut g, "std_mutex_token_bucket", keys, |k| {
        limiter.allow::<K>(k)
    });
    let limiter = spec.parking_lot_bucket::<K>();
    sweep(&mut g, "parking_lot_token_bucket", keys, |k| {
        limiter.allow::<K>(k)
    });
    g.finish();
}

/// New keys per fresh limiter: bounds memory, and every run starts from
/// small tables, as a limiter does when a service starts.
const INSERT_CHUNK: u64 = 100_000;

/// Times `iters` first requests for new keys over `threads` threads, a
/// fresh limiter from `make` per chunk; `len` must count every key.
fn timed_inserts<L: Sync>(
    threads: usize,
    iters: u64,
    make: impl Fn() -> L,
    allow: impl Fn(&L, u64) -> bool + Sync,
    len: impl Fn(&L) -> usize,
) -> Duration {
    let per_chunk = (INSERT_CHUNK / threads as u64).max(1);
    let mut total = Duration::ZERO;
    let mut done = 0;
    while done < iters {
        let per_thread = per_chunk.min((iters - done).div_ceil(threads as u64));
        let limiter = make();
        let run: Run = run_new_keys(threads, per_thread, 0, |key| allow(&limiter, key));
        assert_eq!(run.admitted, run.decisions, "a first request was denied");
        assert_eq!(len(&limiter) as u64, run.decisions, "a new key was lost");
        total += run.elapsed;
        done += run.decisions;
    }
    total
}

/// Benchmarks first requests for new keys on 1, 2, 4 and 8 threads, a fresh
/// limiter from `make` per chunk.
fn insert_sweep<L: Sync>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    make: impl Fn() -> L,
    allow: impl Fn(&L, u64) -> bool + Sync,
    len: impl Fn(&L) -> usize,
) {
    for &threads in &THREADS {
        g.bench_with_input(BenchmarkId::new(id, threads), &threads, |b, &threads| {
            b.iter_custom(|iters| timed_inserts(threads, iters, &make, &allow, &len))
        });
    }
}

fn insertion(c: &mut Criterion) {
    let spec = Spec::DEEP_BUCKET;
    let quota = spec.tollgate();
    let mut g = c.benchmark_group("threads_insert_new_u64");
    insert_sweep(
        &mut g,
        "tollgate_token_bucket",
        || TokenBucket::<u64>::new(quota),
        |l, k| l.allow(&k),
        TokenBucket::len,
    );
    insert_sweep(
        &mut g,
        "governor_keyed",
        || governor_keyed::<u64>(spec),
        |l, k| l.check_key(&k).is_ok(),
        |l| l.len(),
    );
    insert_sweep(
        &mut g,
        "std_mutex_token_bucket",
        || spec.std_bucket::<u64>(),
        |l, k| l.allow(&k),
        |l| l.len(),
    );
    g.finish();
}

/// A registry on 10,000 clients: every client on the default tier, every
/// client assigned to the other, and the locked baseline with every client
/// assigned; one bare limiter for scale. Each registry also holds the
/// assigned bystanders, so no lookup meets an empty map.
fn registry(c: &mut Criterion) {
    let spec = Spec::DEEP_BUCKET;
    let clients = string_keys(10_000);
    let mut g = c.benchmark_group("threads_registry_10k_string");
    let limiter: TokenBucket = TokenBucket::new(spec.tollgate());
    sweep(&mut g, "tollgate_token_bucket_alone", &clients, |k| {
        limiter.allow(k)
    });
    let unassigned = two_tier_registry(spec);
    sweep(&mut g, "registry_default_tier", &clients, |k| {
        unassigned.allow(k)
    });
    let assigned = two_tier_registry(spec);
    for client in &clients {
        assigned.assign(client, OTHER_TIER).expect("known tier");
    }
    sweep(&mut g, "registry_assigned", &clients, |k| assigned.allow(k));
    let locked = locked_two_tier_registry(spec);
    for client in &clients {
        locked.assign(client, 1);
    }
    sweep(&mut g, "rwlock_registry_assigned", &clients, |k| {
        locked.allow(k)
    });
    g.finish();
}

fn threads(c: &mut Criterion) {
    case(c, "threads_hot_key_string", &string_keys(1));
    case(c, "threads_10k_string", &string_keys(10_000));
    insertion(c);
    registry(c);
}

criterion_group! {
    name = benches;
    // No plots: criterion's need system fonts; `examples/compare` draws the chart.
    config = Criterion::default()
        .without_plots()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(10);
    targets = threads
}
criterion_main!(benches);
