//! Several OS processes share one limit through Redis: together they never
//! admit more than the quota.
#![cfg(feature = "redis")]

mod redis_support;

use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use tollgate::Quota;
use tollgate::redis::{
    RedisAlgorithm, RedisLimitError, RedisLimiter, RedisOptions, SlidingWindowLogScript,
    TokenBucketScript,
};

const PROCESSES: usize = 4;
const THREADS_PER_PROCESS: usize = 4;
const ATTEMPTS_PER_THREAD: usize = 60;
const LIMIT: u64 = 50;

/// 50 per day: nothing comes back while the test runs.
fn quota() -> Quota {
    Quota::new(LIMIT, Duration::from_secs(86_400)).unwrap()
}

fn spawn_and_total(test: &str, algorithm: &str) {
    let Some(redis) = redis_support::redis(test) else {
        return;
    };
    let prefix = redis_support::unique_prefix(test);
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..PROCESSES)
        .map(|_| {
            Command::new(&exe)
                .args([
                    "child_process_worker",
                    "--exact",
                    "--ignored",
                    "--nocapture",
                ])
                .env("TOLLGATE_CHILD_REDIS_URL", redis.url())
                .env("TOLLGATE_CHILD_PREFIX", &prefix)
                .env("TOLLGATE_CHILD_ALGORITHM", algorithm)
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .expect("the test binary runs again as a child")
        })
        .collect();
    let mut total = 0;
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{test}: a child failed: {output:?}"
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        let admitted: u64 = stdout
            .lines()
            .find_map(|line| line.strip_prefix("ADMITTED "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("{test}: no count in the child's output: {stdout}"));
        total += admitted;
    }
    // Demand is far above the limit and Redis answered every call, so the
    // processes together spend the quota exactly, and never more.
    assert_eq!(
        total, LIMIT,
        "{test}: {PROCESSES} processes admitted {total}"
    );
}

#[test]
fn processes_share_one_token_bucket() {
    spawn_and_total("processes_share_one_token_bucket", "token_bucket");
}

#[test]
fn processes_share_one_sliding_log() {
    spawn_and_total("processes_share_one_sliding_log", "sliding_window_log");
}

fn hammer<A: RedisAlgorithm>(url: &str, prefix: &str) -> u64 {
    let client = redis::Client::open(url).unwrap();
    let options = RedisOptions::new()
        .prefix(prefix)
        .timeout(Duration::from_secs(5));
    let limiter: RedisLimiter<A> = RedisLimiter::with_options(quota(), client, options).unwrap();
    thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS_PER_PROCESS)
            .map(|_| {
                scope.spawn(|| {
                    let mut admitted = 0;
                    for _ in 0..ATTEMPTS_PER_THREAD {
                        match limiter.try_check_n("shared", 1) {
                            Ok(decision) => admitted += u64::from(decision.allowed()),
                            Err(RedisLimitError::Backend(error)) => panic!("Redis failed: {error}"),
                            Err(error) => panic!("{error}"),
                        }
                    }
                    admitted
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    })
}

/// The body of each child process; does nothing unless started by the tests above.
#[test]
#[ignore = "run as a child process by the processes_share_* tests"]
fn child_process_worker() {
    let (Ok(url), Ok(prefix), Ok(algorithm)) = (
        std::env::var("TOLLGATE_CHILD_REDIS_URL"),
        std::env::var("TOLLGATE_CHILD_PREFIX"),
        std::env::var("TOLLGATE_CHILD_ALGORITHM"),
    ) else {
        eprintln!("child_process_worker only runs as a child of the processes_share_* tests");
        return;
    };
    let admitted = match algorithm.as_str() {
        "token_bucket" => hammer::<TokenBucketScript>(&url, &prefix),
        "sliding_window_log" => hammer::<SlidingWindowLogScript>(&url, &prefix),
        other => panic!("unknown algorithm {other}"),
    };
    println!("ADMITTED {admitted}");
}
