//! Real threads and real time: waiters sleep on the OS clock and the limiter
//! decides on its own. Bounds are generous but meaningful.

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use tollgate::wait::Acquire;
use tollgate::{Clock, FixedWindow, MonotonicClock, Quota, TokenBucket};

const MS: u64 = 1_000_000;

/// Runs `threads` threads, thread `i` acquiring `per_thread(i)` single units
/// of key "k"; returns every acquisition's clock reading, sorted, and the
/// reading before the threads started.
fn acquire_from_threads<L>(
    limiter: Arc<L>,
    now: impl Fn(&L) -> u64 + Send + Sync + Copy + 'static,
    threads: usize,
    per_thread: impl Fn(usize) -> usize,
) -> (u64, Vec<u64>)
where
    L: Acquire<str> + 'static,
{
    let start = now(&limiter);
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let limiter = Arc::clone(&limiter);
            let count = per_thread(i);
            thread::spawn(move || {
                (0..count)
                    .map(|_| {
                        limiter
                            .acquire("k", 1, Duration::from_secs(5))
                            .expect("every waiter is served");
                        now(&limiter)
                    })
                    .collect::<Vec<u64>>()
            })
        })
        .collect();
    let mut times: Vec<u64> = Vec::new();
    for (i, handle) in handles.into_iter().enumerate() {
        let served = handle.join().unwrap();
        assert_eq!(
            served.len(),
            per_thread(i),
            "thread {i} was not fully served"
        );
        times.extend(served);
    }
    times.sort_unstable();
    (start, times)
}

#[test]
fn eight_threads_share_100_per_second_for_one_second() {
    // Burst 1, so the bucket admits one unit per 10 ms from the start: 100
    // units take 99 intervals. The exact clock, because the bound below is
    // read on the limiter's clock: the default clock's published time can
    // stand still while its upkeep thread waits for a core, and a wait that
    // sees it stand still past its stall allowance ends on the real time it
    // slept (`docs/waiting.md`), earlier than that clock shows.
    let limiter: Arc<TokenBucket> = Arc::new(TokenBucket::with_clock(
        Quota::per_second(100).with_burst(1),
        MonotonicClock::exact(),
    ));
    let (start, times) = acquire_from_threads(
        limiter,
        |l: &TokenBucket| l.clock().now_nanos(),
        8,
        |i| if i < 4 { 13 } else { 12 },
    );
    assert_eq!(times.len(), 100);
    for (k, &at) in times.iter().enumerate() {
        let earliest = start + k as u64 * 10 * MS;
        assert!(at >= earliest, "unit {k} served {} ns early", earliest - at);
    }
    let ideal = 990 * MS;
    let total = times[99] - start;
    assert!(
        (ideal..=ideal + ideal / 10).contains(&total),
        "took {} ms, ideal {} ms",
        total / MS,
        ideal / MS
    );
}

#[test]
fn rechecking_threads_never_overfill_a_window() {
    let window = 100 * MS;
    let limiter: Arc<FixedWindow> = Arc::new(FixedWindow::new(
        Quota::new(10, Duration::from_nanos(window)).unwrap(),
    ));
    let (start, times) =
        acquire_from_threads(limiter, |l: &FixedWindow| l.clock().now_nanos(), 4, |_| 10);
    assert_eq!(times.len(), 40);
    // Forty units at ten per window need four windows: the one running at
    // the start and three more.
    let mut per_window = std::collections::BTreeMap::new();
    for &at in &times {
        *per_window.entry(at / window).or_insert(0) += 1;
    }
    assert!(per_window.values().all(|&n| n <= 10), "{per_window:?}");
    let total = times[39] - start;
    assert!(total >= 2 * window, "served in {} ms", total / MS);
    assert!(total <= 20 * window, "served in {} ms", total / MS);
}
