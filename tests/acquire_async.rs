//! `acquire_async`: deterministic waits on a manual clock, cancel-safety when
//! the future is dropped, and real runs on a `tokio` runtime.
#![cfg(feature = "tokio")]

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tollgate::wait::{Acquire, AsyncSleeper, ManualSleeper, Reserve, WaitError, Waiter};
use tollgate::{Clock, FixedWindow, ManualClock, MonotonicClock, Quota, RateLimiter, TokenBucket};

const MS: Duration = Duration::from_millis(1);

/// Polls a future whose sleeps complete at once to its end.
fn run_now<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1000 {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
    panic!("a manual sleeper's wait did not finish");
}

/// A sleeper whose sleeps never end: the wait stays parked at its first one.
struct Parked(ManualClock);

impl Clock for Parked {
    fn now_nanos(&self) -> u64 {
        self.0.now_nanos()
    }
}

impl AsyncSleeper for Parked {
    fn sleep_async(&self, _duration: Duration) -> impl Future<Output = ()> + Send {
        std::future::pending()
    }
}

/// Polls `future` once and checks it is parked in a sleep.
fn park<F: Future>(future: std::pin::Pin<&mut F>) {
    let mut cx = Context::from_waker(Waker::noop());
    assert!(
        future.poll(&mut cx).is_pending(),
        "the wait should be sleeping"
    );
}

fn bucket(limit: u64, burst: u64, clock: &ManualClock) -> TokenBucket<String, ManualClock> {
    TokenBucket::with_clock(Quota::per_second(limit).with_burst(burst), clock.clone())
}

#[test]
fn async_waits_take_the_same_time_as_blocking_ones() {
    let clock = ManualClock::new();
    let limiter = bucket(10, 3, &clock);
    let waiter = Waiter::with_sleeper(ManualSleeper::new(clock.clone()));
    assert!(limiter.allow_n("k", 3));
    let waited = run_now(limiter.acquire_async_with(&waiter, "k", 2, Duration::from_secs(1)));
    assert_eq!(waited, Ok(200 * MS));
    // Shorter timeout: fails at once, nothing reserved, no time passed.
    let before = clock.elapsed();
    let failed = run_now(limiter.acquire_async_with(&waiter, "k", 1, 99 * MS));
    assert_eq!(
        failed,
        Err(WaitError::Timeout {
            needed: 100 * MS,
            left: 99 * MS
        })
    );
    assert_eq!(clock.elapsed(), before);
    assert!(matches!(
        run_now(limiter.acquire_async_with(&waiter, "k", 4, Duration::MAX)),
        Err(WaitError::Capacity(_))
    ));

    let window: FixedWindow<String, _> =
        FixedWindow::with_clock(Quota::per_second(1), clock.clone());
    assert!(window.allow("k"));
    // The clock stands at 200 ms: the window ends at 1 s.
    let waited = run_now(window.acquire_async_with(&waiter, "k", 1, Duration::from_secs(1)));
    assert_eq!(waited, Ok(800 * MS));
}

#[test]
fn dropping_a_reserving_wait_gives_its_tokens_back() {
    // Go's "wait cancel": burst 3 at 10/s, two spent, then a wait for three
    // is dropped after 100 ms; all three come back.
    let clock = ManualClock::new();
    let limiter = bucket(10, 3, &clock);
    assert!(limiter.allow_n("k", 2));
    let waiter = Waiter::with_sleeper(Parked(clock.clone()));
    {
        let mut wait = pin!(limiter.acquire_async_with(&waiter, "k", 3, Duration::from_secs(1)));
        park(wait.as_mut());
        // Reserved: the bucket is in debt, one more token is 300 ms away.
        assert_eq!(
            limiter
                .reserve_within("k", 0, Duration::MAX)
                .unwrap()
                .delay(),
            300 * MS
        );
        clock.advance(100 * MS);
    } // dropped mid-wait
    // One left plus one refilled: two pass at once, as if the wait never was.
    let d = limiter.check_n("k", 0).unwrap();
    assert_eq!(d.remaining(), 2);
    assert!(limiter.allow_n("k", 2));
}

#[test]
fn dropping_a_rechecking_wait_spends_nothing() {
    let clock = ManualClock::new();
    let limiter: FixedWindow<String, _> =
        FixedWindow::with_clock(Quota::per_second(2), clock.clone());
    assert!(limiter.allow("k"));
    let waiter = Waiter::with_sleeper(Parked(clock.clone()));
    {
        let mut wait = pin!(limiter.acquire_async_with(&waiter, "k", 2, Duration::from_secs(1)));
        park(wait.as_mut());
    }
    assert_eq!(limiter.check_n("k", 0).unwrap().remaining(), 1);
}

#[test]
fn a_finished_wait_keeps_its_tokens() {
    let clock = ManualClock::new();
    let limiter = bucket(10, 1, &clock);
    assert!(limiter.allow("k"));
    let waiter = Waiter::with_sleeper(ManualSleeper::new(clock.clone()));
    assert_eq!(
        run_now(limiter.acquire_async_with(&waiter, "k", 1, Duration::from_secs(1))),
        Ok(100 * MS)
    );
    // The token was used: the next is due one interval later.
    assert!(!limiter.allow("k"));
    assert_eq!(limiter.check_n("k", 1).unwrap().retry_after(), 100 * MS);
}

#[tokio::test(flavor = "current_thread")]
async fn waiting_does_not_block_the_runtime() {
    let limiter: TokenBucket = TokenBucket::new(Quota::per_second(10).with_burst(1));
    assert!(limiter.allow("k"));
    let ticks = Arc::new(AtomicU64::new(0));
    let ticker = {
        let ticks = Arc::clone(&ticks);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(5 * MS).await;
                // Relaxed: a plain counter read after the wait.
                ticks.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let waited = limiter
        .acquire_async("k", 1, Duration::from_secs(2))
        .await
        .unwrap();
    ticker.abort();
    assert!(waited >= 99 * MS, "waited {waited:?}");
    // One thread: the ticker only ran because the wait yielded it.
    // Relaxed: the ticker is aborted; only the count matters.
    let ticks = ticks.load(Ordering::Relaxed);
    assert!(
        ticks >= 5,
        "the ticker ran {ticks} times during a 100 ms wait"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_timed_out_future_gives_its_reservation_back() {
    let limiter: TokenBucket = TokenBucket::new(Quota::per_second(10).with_burst(3));
    assert!(limiter.allow_n("k", 2));
    // Three tokens: due in about 200 ms; dropped by the timeout after 20 ms.
    let wait = limiter.acquire_async("k", 3, Duration::from_secs(5));
    assert!(tokio::time::timeout(20 * MS, wait).await.is_err());
    // Kept, the reservation would push two more tokens out past 400 ms.
    let next = limiter.reserve("k", 2).unwrap();
    assert!(next.delay() < 150 * MS, "due in {:?}", next.delay());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_share_a_rate_and_none_is_early() {
    // The exact clock: "early" is read on the limiter's clock, which the
    // default clock's stalls would leave behind (see `acquire_threads.rs`).
    let limiter: Arc<TokenBucket> = Arc::new(TokenBucket::with_clock(
        Quota::per_second(50).with_burst(1),
        MonotonicClock::exact(),
    ));
    let start = limiter.clock().now_nanos();
    let tasks: Vec<_> = (0..4)
        .map(|_| {
            let limiter = Arc::clone(&limiter);
            tokio::spawn(async move {
                let mut times = Vec::new();
                for _ in 0..5 {
                    limiter
                        .acquire_async("k", 1, Duration::from_secs(5))
                        .await
                        .unwrap();
                    times.push(limiter.clock().now_nanos());
                }
                times
            })
        })
        .collect();
    let mut times = Vec::new();
    for task in tasks {
        times.extend(task.await.unwrap());
    }
    times.sort_unstable();
    assert_eq!(times.len(), 20);
    let interval = 20_000_000;
    for (k, &at) in times.iter().enumerate() {
        assert!(at >= start + k as u64 * interval, "unit {k} early");
    }
    // Ideal 380 ms; a loaded machine gets twice that.
    assert!(times[19] - start <= 2 * 19 * interval);
}
