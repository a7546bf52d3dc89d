//! `acquire_async` on the async Redis limiters, against a real Redis: waits
//! that succeed after the retry time, timeouts and impossible costs that
//! fail at once and spend nothing, cancellation, and the failure policy.
#![cfg(all(feature = "redis", feature = "tokio"))]

mod redis_support;

use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use tollgate::Quota;
use tollgate::redis::{AsyncRedisTokenBucket, FailurePolicy, RedisOptions};
use tollgate::wait::WaitError;

/// A token bucket on the Redis at `url`, under a key prefix of its own.
async fn bucket(
    url: &str,
    test: &str,
    quota: Quota,
    policy: FailurePolicy,
) -> AsyncRedisTokenBucket<MultiplexedConnection> {
    let connection = redis::Client::open(url)
        .expect("a valid Redis URL")
        .get_multiplexed_async_connection()
        .await
        .expect("an async connection");
    let options = RedisOptions::new()
        .prefix(redis_support::unique_prefix(test))
        .failure_policy(policy)
        .timeout(Duration::from_secs(1));
    AsyncRedisTokenBucket::with_options(quota, connection, options).expect("a valid prefix")
}

#[tokio::test]
async fn a_wait_succeeds_after_the_retry_time() {
    let test = "a_wait_succeeds_after_the_retry_time";
    let Some(redis) = redis_support::redis(test) else {
        return;
    };
    // Two at once, then one every 0.5 s.
    let limiter = bucket(
        redis.url(),
        test,
        Quota::per_second(2),
        FailurePolicy::FailClosed,
    )
    .await;
    let timeout = Duration::from_secs(5);
    for _ in 0..2 {
        let waited = limiter.acquire_async("k", 1, timeout).await.unwrap();
        assert_eq!(waited, Duration::ZERO, "{test}: the bucket starts full");
    }
    let start = Instant::now();
    let waited = limiter.acquire_async("k", 1, timeout).await.unwrap();
    let elapsed = start.elapsed();
    assert!(
        elapsed >= Duration::from_millis(400) && elapsed < Duration::from_secs(3),
        "{test}: the third unit is due about 0.5 s later, took {elapsed:?}"
    );
    assert!(
        waited >= Duration::from_millis(400) && waited <= elapsed,
        "{test}: reported {waited:?} of {elapsed:?}"
    );
    assert!(
        !limiter.check_n("k", 1).await.unwrap().allowed(),
        "{test}: the wait spent the unit it waited for"
    );
}

#[tokio::test]
async fn a_timeout_shorter_than_the_wait_fails_at_once_and_spends_nothing() {
    let test = "a_timeout_shorter_than_the_wait_fails_at_once";
    let Some(redis) = redis_support::redis(test) else {
        return;
    };
    let limiter = bucket(
        redis.url(),
        test,
        Quota::per_second(2),
        FailurePolicy::FailClosed,
    )
    .await;
    assert!(limiter.check_n("k", 1).await.unwrap().allowed());
    // One unit is left; two need about 0.5 s more.
    let start = Instant::now();
    let result = limiter
        .acquire_async("k", 2, Duration::from_millis(300))
        .await;
    let elapsed = start.elapsed();
    match result {
        Err(WaitError::Timeout { needed, left }) => {
            assert!(
                needed > Duration::from_millis(300),
                "{test}: needed {needed:?}"
            );
            assert!(left <= Duration::from_millis(300), "{test}: left {left:?}");
        }
        other => panic!("{test}: expected a timeout, got {other:?}"),
    }
    assert!(
        // A wait that slept until its timeout would take 300 ms or more.
        elapsed < Duration::from_millis(250),
        "{test}: failed without sleeping, took {elapsed:?}"
    );
    assert!(
        limiter.check_n("k", 1).await.unwrap().allowed(),
        "{test}: the unit left is still there"
    );
}

#[tokio::test]
async fn a_cost_over_capacity_fails_at_once() {
    let test = "a_cost_over_capacity_fails_at_once";
    let Some(redis) = redis_support::redis(test) else {
        return;
    };
    let limiter = bucket(
        redis.url(),
        test,
        Quota::per_second(2),
        FailurePolicy::FailClosed,
    )
    .await;
    let start = Instant::now();
    let result = limiter.acquire_async("k", 3, Duration::MAX).await;
    assert!(
        matches!(result, Err(WaitError::Capacity(e)) if e.requested == 3 && e.max == 2),
        "{test}: {result:?}"
    );
    assert!(start.elapsed() < Duration::from_secs(1), "{test}: no wait");
    assert!(
        limiter.check_n("k", 2).await.unwrap().allowed(),
        "{test}: nothing was spent"
    );
}

#[tokio::test]
async fn dropping_the_future_mid_wait_leaves_the_units_unspent() {
    let test = "dropping_the_future_mid_wait_leaves_the_units_unspent";
    let Some(redis) = redis_support::redis(test) else {
        return;
    };
    // One token, back 2 s after it is spent.
    let quota = Quota::new(1, Duration::from_secs(2)).unwrap().with_burst(1);
    let limiter = bucket(redis.url(), test, quota, FailurePolicy::FailClosed).await;
    let start = Instant::now();
    assert!(limiter.check_n("k", 1).await.unwrap().allowed());
    let cut_short = tokio::time::timeout(
        Duration::from_millis(300),
        limiter.acquire_async("k", 1, Duration::from_secs(10)),
    )
    .await;
    assert!(cut_short.is_err(), "{test}: the wait was still sleeping");
    // Past the token's return, well before the one after it: a wait that
    // had gone on would have taken it.
    tokio::time::sleep_until((start + Duration::from_millis(2400)).into()).await;
    assert!(
        start.elapsed() < Duration::from_millis(3500),
        "{test}: checked too late to tell"
    );
    assert!(
        limiter.check_n("k", 1).await.unwrap().allowed(),
        "{test}: the dropped wait took nothing"
    );
}

#[tokio::test]
async fn backend_errors_follow_the_failure_policy() {
    let test = "backend_errors_follow_the_failure_policy";
    let Some(mut server) = redis_support::private_server(test) else {
        return;
    };
    let url = server.url();
    let open = bucket(&url, test, Quota::per_hour(1), FailurePolicy::FailOpen).await;
    let closed = bucket(&url, test, Quota::per_hour(1), FailurePolicy::FailClosed).await;
    server.stop();

    // Fail open admits: the wait passes at once, over and over.
    for _ in 0..3 {
        assert_eq!(
            open.acquire_async("k", 1, Duration::ZERO).await,
            Ok(Duration::ZERO),
            "{test}: fail open"
        );
    }
    // Fail closed denies with the per-call timeout (1 s) as its retry hint:
    // longer than a 50 ms wait, so it fails at once.
    let result = closed
        .acquire_async("k", 1, Duration::from_millis(50))
        .await;
    assert!(
        matches!(result, Err(WaitError::Timeout { needed, .. }) if needed == Duration::from_secs(1)),
        "{test}: fail closed: {result:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_runs_on_a_spawned_task() {
    let test = "a_wait_runs_on_a_spawned_task";
    let Some(redis) = redis_support::redis(test) else {
        return;
    };
    let limiter = std::sync::Arc::new(
        bucket(
            redis.url(),
            test,
            Quota::per_second(2),
            FailurePolicy::FailClosed,
        )
        .await,
    );
    // The wait's future is `Send`, so a multi-threaded runtime can run it.
    let task = {
        let limiter = limiter.clone();
        tokio::spawn(async move { limiter.acquire_async("k", 2, Duration::from_secs(5)).await })
    };
    assert_eq!(task.await.unwrap(), Ok(Duration::ZERO), "{test}");
    assert!(
        !limiter.check_n("k", 1).await.unwrap().allowed(),
        "{test}: the spawned wait spent both units"
    );
}
