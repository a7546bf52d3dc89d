//! Decisions per second against a local Redis, with 1 and 8 concurrent
//! clients, beside a plain `INCR` round trip as the floor.
//!
//! `cargo bench --features redis --bench redis`; uses `REDIS_URL`, else
//! `redis://127.0.0.1:6379`. Prints a Markdown table of medians of three
//! runs.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use tollgate::Quota;
use tollgate::redis::{
    AsyncRedisLimiter, FixedWindowScript, RedisAlgorithm, RedisLimiter, RedisOptions,
    SlidingWindowCounterScript, SlidingWindowLogScript, TokenBucketScript,
};

const RUN_FOR: Duration = Duration::from_millis(1500);
const KEYS: u64 = 1000;

/// Runs `work` on `clients` threads for [`RUN_FOR`]; returns calls per second.
fn measure<S: Send>(
    clients: usize,
    setup: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, u64) + Sync,
) -> f64 {
    let stop = AtomicBool::new(false);
    let calls = AtomicU64::new(0);
    let started = Instant::now();
    thread::scope(|scope| {
        for client in 0..clients {
            let (stop, calls, setup, work) = (&stop, &calls, &setup, &work);
            scope.spawn(move || {
                let mut state = setup();
                let mut n = client as u64 * 7919;
                // Relaxed: a stop flag; being late by one call does not matter.
                while !stop.load(Ordering::Relaxed) {
                    work(&mut state, n);
                    n += 1;
                }
                // Relaxed: read only after the scope joins every thread.
                calls.fetch_add(n - client as u64 * 7919, Ordering::Relaxed);
            });
        }
        thread::sleep(RUN_FOR);
        // Relaxed: see the loop above.
        stop.store(true, Ordering::Relaxed);
    });
    // Relaxed: the scope's joins order every increment before this load.
    calls.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

fn incr(url: &str, clients: usize) -> f64 {
    let client = redis::Client::open(url).unwrap();
    measure(
        clients,
        || client.get_connection().unwrap(),
        |connection, n| {
            let _: i64 = redis::cmd("INCR")
                .arg(format!("bench:incr:{}", n % KEYS))
                .query(connection)
                .unwrap();
        },
    )
}

fn blocking<A: RedisAlgorithm>(url: &str, clients: usize) -> f64 {
    let client = redis::Client::open(url).unwrap();
    let options = RedisOptions::new().prefix(format!("bench:{}:", std::any::type_name::<A>()));
    let limiter: RedisLimiter<A> =
        RedisLimiter::with_options(Quota::per_second(100), client, options).unwrap();
    measure(
        clients,
        || (),
        |(), n| {
            let _ = limiter.try_check_n(&format!("k{}", n % KEYS), 1).unwrap();
        },
    )
}

fn async_token_bucket(url: &str, tasks: usize) -> f64 {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = redis::Client::open(url).unwrap();
        let connection = client.get_multiplexed_async_connection().await.unwrap();
        let options = RedisOptions::new().prefix("bench:async:");
        let limiter = std::sync::Arc::new(
            AsyncRedisLimiter::<TokenBucketScript, _>::with_options(
                Quota::per_second(100),
                connection,
                options,
            )
            .unwrap(),
        );
        let deadline = Instant::now() + RUN_FOR;
        let started = Instant::now();
        let handles: Vec<_> = (0..tasks as u64)
            .map(|task| {
                let limiter = limiter.clone();
                tokio::spawn(async move {
                    let mut n = 0u64;
                    while Instant::now() < deadline {
                        let key = format!("k{}", (task * 7919 + n) % KEYS);
                        let _ = limiter.try_check_n(&key, 1).await.unwrap();
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        let mut total = 0;
        for handle in handles {
            total += handle.await.unwrap();
        }
        total as f64 / started.elapsed().as_secs_f64()
    })
}

fn main() {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned());
    if let Err(error) = redis::Client::open(url.as_str()).and_then(|c| c.get_connection()) {
        eprintln!("no Redis at {url}: {error}; set REDIS_URL");
        std::process::exit(1);
    }
    type Row = (&'static str, fn(&str, usize) -> f64);
    let rows: [Row; 6] = [
        ("plain `INCR` round trip (floor)", incr),
        ("`RedisTokenBucket`", blocking::<TokenBucketScript>),
        ("`RedisFixedWindow`", blocking::<FixedWindowScript>),
        (
            "`RedisSlidingWindowCounter`",
            blocking::<SlidingWindowCounterScript>,
        ),
        (
            "`RedisSlidingWindowLog`",
            blocking::<SlidingWindowLogScript>,
        ),
        (
            "`AsyncRedisTokenBucket` (one multiplexed connection)",
            async_token_bucket,
        ),
    ];
    println!("| operation | 1 client (ops/s) | 8 clients (ops/s) |");
    println!("|---|---:|---:|");
    // The median of three runs per cell, against noise from other processes.
    let median = |run: fn(&str, usize) -> f64, clients: usize| {
        let mut runs = [run(&url, clients), run(&url, clients), run(&url, clients)];
        runs.sort_by(f64::total_cmp);
        runs[1]
    };
    for (name, run) in rows {
        let one = median(run, 1);
        let eight = median(run, 8);
        println!("| {name} | {one:.0} | {eight:.0} |");
    }
}
