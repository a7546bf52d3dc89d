//! Redis stopped, restarted and frozen mid-run: decisions follow the failure
//! policy, errors are reported, nothing panics, and Redis decides again as
//! soon as it is back. Each test runs its own private `redis-server`.
#![cfg(feature = "redis")]

mod redis_support;

use std::time::{Duration, Instant};

use tollgate::redis::{
    AsyncRedisTokenBucket, BackendError, FailurePolicy, RedisLimitError, RedisOptions,
    RedisSlidingWindowLog, RedisTokenBucket,
};
use tollgate::{Quota, RateLimiter};

fn options(test: &str, policy: FailurePolicy) -> RedisOptions {
    RedisOptions::new()
        .prefix(redis_support::unique_prefix(test))
        .failure_policy(policy)
        .timeout(Duration::from_secs(1))
}

/// 3 per hour: no unit comes back during the test.
fn quota() -> Quota {
    Quota::per_hour(3)
}

/// The admissions a policy makes for six requests while Redis is away.
fn admitted_while_down(policy: FailurePolicy) -> usize {
    match policy {
        FailurePolicy::FailClosed => 0,
        FailurePolicy::FailOpen => 6,
        // A fresh local bucket of 3: it knows nothing of what Redis counted.
        FailurePolicy::Fallback => 3,
    }
}

fn stopped_mid_run(test: &str, policy: FailurePolicy) {
    let Some(mut server) = redis_support::private_server(test) else {
        return;
    };
    let client = redis::Client::open(server.url()).unwrap();
    let limiter = RedisTokenBucket::with_options(quota(), client, options(test, policy)).unwrap();

    for expected_remaining in [2, 1] {
        let outcome = limiter.check_detailed("k", 1).unwrap();
        assert!(
            outcome.is_from_redis(),
            "{test}: {:?}",
            outcome.backend_error()
        );
        assert_eq!(outcome.decision().remaining(), expected_remaining);
    }

    server.stop();
    let mut admitted = 0;
    for _ in 0..6 {
        let outcome = limiter.check_detailed("k", 1).unwrap();
        assert!(
            matches!(outcome.backend_error(), Some(BackendError::Redis(_))),
            "{test}: the error is reported: {:?}",
            outcome.backend_error()
        );
        admitted += usize::from(outcome.decision().allowed());
    }
    assert_eq!(
        admitted,
        admitted_while_down(policy),
        "{test}: admissions under {policy:?}"
    );
    assert!(matches!(
        limiter.try_check_n("k", 1),
        Err(RedisLimitError::Backend(BackendError::Redis(_)))
    ));
    // Through the trait: an answer, never a panic.
    let _ = limiter.check("k");

    // An empty server comes back on the same port: the pooled connection is
    // dead, the limiter reconnects, and Redis decides from a fresh state.
    server.restart();
    let outcome = limiter.check_detailed("k", 1).unwrap();
    assert!(
        outcome.is_from_redis(),
        "{test}: {:?}",
        outcome.backend_error()
    );
    assert_eq!(
        (outcome.decision().allowed(), outcome.decision().remaining()),
        (true, 2)
    );
}

#[test]
fn stopped_redis_fails_closed() {
    stopped_mid_run("stopped_redis_fails_closed", FailurePolicy::FailClosed);
}

#[test]
fn stopped_redis_fails_open() {
    stopped_mid_run("stopped_redis_fails_open", FailurePolicy::FailOpen);
}

#[test]
fn stopped_redis_falls_back_to_memory() {
    stopped_mid_run(
        "stopped_redis_falls_back_to_memory",
        FailurePolicy::Fallback,
    );
}

#[test]
fn a_frozen_redis_times_out_under_each_policy() {
    let test = "a_frozen_redis_times_out_under_each_policy";
    let Some(server) = redis_support::private_server(test) else {
        return;
    };
    for policy in [
        FailurePolicy::FailClosed,
        FailurePolicy::FailOpen,
        FailurePolicy::Fallback,
    ] {
        let client = redis::Client::open(server.url()).unwrap();
        let limiter =
            RedisSlidingWindowLog::with_options(quota(), client, options(test, policy)).unwrap();
        assert!(limiter.check_detailed("k", 1).unwrap().is_from_redis());

        server.pause();
        let started = Instant::now();
        let outcome = limiter.check_detailed("k", 1).unwrap();
        let waited = started.elapsed();
        server.resume();

        assert!(
            matches!(outcome.backend_error(), Some(BackendError::Timeout(_))),
            "{test}: {policy:?}: {:?}",
            outcome.backend_error()
        );
        let expected = policy != FailurePolicy::FailClosed;
        assert_eq!(outcome.decision().allowed(), expected, "{test}: {policy:?}");
        // Generous: the timeout is 1 s; this only catches a hang.
        assert!(
            waited < Duration::from_secs(10),
            "{test}: waited {waited:?}"
        );

        // The timed-out connection was dropped; a new one gets a real answer.
        let outcome = limiter.check_detailed("k", 1).unwrap();
        assert!(
            outcome.is_from_redis(),
            "{test}: {:?}",
            outcome.backend_error()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_limiter_follows_the_policy_and_recovers() {
    let test = "async_limiter_follows_the_policy_and_recovers";
    let Some(mut server) = redis_support::private_server(test) else {
        return;
    };
    let client = redis::Client::open(server.url()).unwrap();
    let manager = client.get_connection_manager().await.unwrap();
    let limiter = AsyncRedisTokenBucket::with_options(
        quota(),
        manager,
        // Shorter: while the server is down each call waits it out.
        options(test, FailurePolicy::Fallback).timeout(Duration::from_millis(300)),
    )
    .unwrap();
    assert!(
        limiter
            .check_detailed("k", 1)
            .await
            .unwrap()
            .is_from_redis()
    );

    server.stop();
    let mut admitted = 0;
    for _ in 0..6 {
        let outcome = limiter.check_detailed("k", 1).await.unwrap();
        assert!(
            outcome.backend_error().is_some(),
            "{test}: the error is reported"
        );
        admitted += usize::from(outcome.decision().allowed());
    }
    assert_eq!(admitted, 3, "{test}: the local bucket decides");

    server.restart();
    // The connection manager reconnects in the background; give it time.
    let deadline = Instant::now() + Duration::from_secs(10);
    let outcome = loop {
        let outcome = limiter.check_detailed("k", 1).await.unwrap();
        if outcome.is_from_redis() || Instant::now() > deadline {
            break outcome;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        outcome.is_from_redis(),
        "{test}: {:?}",
        outcome.backend_error()
    );
    assert!(outcome.decision().allowed());
}

#[test]
fn async_limiter_outside_a_runtime_reports_an_error() {
    // A future polled by a bare executor: no Tokio runtime, so no timer.
    let test = "async_limiter_outside_a_runtime_reports_an_error";
    let Some(server) = redis_support::private_server(test) else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let client = redis::Client::open(server.url()).unwrap();
    let connection = runtime
        .block_on(client.get_multiplexed_async_connection())
        .unwrap();
    let limiter: tollgate::redis::AsyncRedisFixedWindow<_> =
        tollgate::redis::AsyncRedisFixedWindow::new(quota(), connection);
    let result = block_on_this_thread(limiter.try_check_n("k", 1));
    assert!(matches!(
        result,
        Err(RedisLimitError::Backend(BackendError::NoRuntime))
    ));
}

/// Polls a future to completion on this thread, outside any runtime.
fn block_on_this_thread<F: std::future::Future>(future: F) -> F::Output {
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};

    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut context) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}

/// Counts `WARN` events from the Redis limiter, to see errors are logged.
struct WarnCounter(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl tracing::Subscriber for WarnCounter {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let metadata = event.metadata();
        if *metadata.level() == tracing::Level::WARN && metadata.target() == "tollgate::redis" {
            // Relaxed: a counter read after the calls on this same thread.
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn backend_errors_are_logged_through_tracing() {
    let test = "backend_errors_are_logged_through_tracing";
    let Some(mut server) = redis_support::private_server(test) else {
        return;
    };
    let client = redis::Client::open(server.url()).unwrap();
    let limiter =
        RedisTokenBucket::with_options(quota(), client, options(test, FailurePolicy::FailOpen))
            .unwrap();
    let warnings = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = WarnCounter(warnings.clone());
    tracing::subscriber::with_default(counter, || {
        assert!(limiter.allow("k"));
        // Relaxed: same thread, see the subscriber.
        assert_eq!(warnings.load(std::sync::atomic::Ordering::Relaxed), 0);
        server.stop();
        assert!(limiter.allow("k"), "{test}: fail open admits");
        assert!(limiter.allow("k"), "{test}: fail open admits");
        // Relaxed: as above.
        assert_eq!(warnings.load(std::sync::atomic::Ordering::Relaxed), 2);
    });
}
