//! Clocks: the manual clock never moves backwards, and a custom clock that
//! does can only make the limiters stricter, never more lenient.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use common::{MS, SEC, SplitMix64};
use tollgate::{
    Algorithm, Clock, FixedWindowRule, KeyedLimiter, ManualClock, MonotonicClock, Quota,
    RateLimiter, SlidingWindowCounterRule, SlidingWindowLogRule, TokenBucketRule,
};

#[test]
fn manual_clock_moves_only_forwards() {
    let clock = ManualClock::new();
    assert_eq!(clock.now_nanos(), 0);
    clock.advance(Duration::from_millis(5));
    assert_eq!(clock.elapsed(), Duration::from_millis(5));
    clock.set(Duration::from_millis(2));
    assert_eq!(
        clock.elapsed(),
        Duration::from_millis(5),
        "set backwards is ignored"
    );
    clock.set(Duration::from_millis(9));
    assert_eq!(clock.now_nanos(), 9 * MS);
    clock.advance(Duration::ZERO);
    assert_eq!(clock.now_nanos(), 9 * MS);
}

#[test]
fn manual_clock_clones_share_one_time() {
    let clock = ManualClock::new();
    let other = clock.clone();
    other.advance(Duration::from_secs(1));
    assert_eq!(clock.now_nanos(), SEC);
}

#[test]
fn manual_clock_saturates_at_u64_max() {
    let clock = ManualClock::new();
    clock.advance(Duration::from_nanos(u64::MAX - 1));
    clock.advance(Duration::from_secs(10));
    assert_eq!(clock.now_nanos(), u64::MAX);
    clock.advance(Duration::MAX);
    assert_eq!(clock.now_nanos(), u64::MAX);
    let clock = ManualClock::new();
    clock.set(Duration::MAX);
    assert_eq!(clock.now_nanos(), u64::MAX);
}

#[test]
fn monotonic_clock_never_decreases() {
    let clock = MonotonicClock::new();
    let mut last = clock.now_nanos();
    for _ in 0..10_000 {
        let now = clock.now_nanos();
        assert!(now >= last);
        last = now;
    }
    let arc: Arc<dyn Clock> = Arc::new(clock);
    assert!(arc.now_nanos() >= last);
}

/// A clock the test sets to any reading, earlier ones included.
#[derive(Clone, Default)]
struct ErraticClock(Arc<AtomicU64>);

impl ErraticClock {
    fn set(&self, nanos: u64) {
        self.0.store(nanos, Ordering::Relaxed);
    }
}

impl Clock for ErraticClock {
    fn now_nanos(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

fn erratic<A: Algorithm>(quota: Quota) -> (KeyedLimiter<A, u64, ErraticClock>, ErraticClock) {
    let clock = ErraticClock::default();
    (KeyedLimiter::with_clock(quota, clock.clone()), clock)
}

/// Spends 3 of 5 units at 10.2 s, then reads earlier and earlier times: no
/// reading may report more room than 2, nor admit more than 2 units in all.
fn jumping_back_gives_nothing_extra<A: Algorithm>() {
    let (limiter, clock) = erratic::<A>(Quota::per_second(5));
    clock.set(10 * SEC + 200 * MS);
    assert!(limiter.allow_n(&1, 3));
    let room = limiter.check_n(&1, 0).unwrap().remaining();
    assert!(room <= 2, "{room}");
    let mut spent = 0;
    for back in [10 * SEC + 100 * MS, 9 * SEC + 900 * MS, 5 * SEC, 1, 0] {
        clock.set(back);
        let peek = limiter.check_n(&1, 0).unwrap();
        assert!(peek.remaining() <= room - spent, "at {back}: {peek:?}");
        while limiter.allow(&1) {
            spent += 1;
            assert!(spent <= room, "at {back}");
        }
    }
    // Back at the latest reading, nothing was gained by the detour.
    clock.set(10 * SEC + 200 * MS);
    assert!(limiter.check_n(&1, 0).unwrap().remaining() <= room - spent);
}

#[test]
fn a_clock_jumping_back_gives_nothing_extra() {
    jumping_back_gives_nothing_extra::<TokenBucketRule>();
    jumping_back_gives_nothing_extra::<FixedWindowRule>();
    jumping_back_gives_nothing_extra::<SlidingWindowCounterRule>();
    jumping_back_gives_nothing_extra::<SlidingWindowLogRule>();
}

#[test]
fn an_exhausted_key_stays_exhausted_when_the_clock_goes_back() {
    fn check<A: Algorithm>() {
        let (limiter, clock) = erratic::<A>(Quota::per_second(5));
        clock.set(3 * SEC + 999 * MS);
        assert!(limiter.allow_n(&1, 5));
        // Earlier windows, and a reading before the clock's origin of use.
        for back in [3 * SEC, 2 * SEC + 999 * MS, SEC, 0] {
            clock.set(back);
            assert!(!limiter.allow(&1), "at {back}");
        }
    }
    check::<TokenBucketRule>();
    check::<FixedWindowRule>();
    check::<SlidingWindowCounterRule>();
    check::<SlidingWindowLogRule>();
}

/// Random readings with frequent backward jumps, one key hammered with single
/// units. With `m` the latest reading so far, a monotonic timeline allows at most
/// `bound(m)` units; the erratic clock must stay within it at every step.
fn never_beyond_the_monotonic_bound<A: Algorithm>(quota: Quota, bound: impl Fn(u64) -> u64) {
    let (limiter, clock) = erratic::<A>(quota);
    let mut rng = SplitMix64::new(0xBAC);
    let window = quota.window_nanos();
    let (mut latest, mut reading, mut admitted) = (0u64, 0u64, 0u64);
    for step in 0..20_000 {
        reading = match rng.below(4) {
            0 => reading.saturating_sub(rng.below(2 * window)),
            1 => latest,
            _ => reading + rng.below(window / 8),
        };
        latest = latest.max(reading);
        clock.set(reading);
        for _ in 0..3 {
            if limiter.allow(&7) {
                admitted += 1;
            }
        }
        assert!(
            admitted <= bound(latest),
            "step {step}: {admitted} > {}",
            bound(latest)
        );
    }
    // The run pressed against the bound, so any leniency would have shown.
    assert!(2 * admitted > bound(latest), "{admitted}");
}

#[test]
fn an_erratic_clock_never_beats_the_monotonic_bound() {
    let quota = Quota::per_second(8);
    let w = quota.window_nanos();
    // Token bucket: capacity plus one token per T = 125 ms elapsed.
    never_beyond_the_monotonic_bound::<TokenBucketRule>(quota, |m| 8 + m / (w / 8));
    // Window algorithms: at most the limit in each window up to the latest.
    let per_window = |m: u64| 8 * (m / w + 1);
    never_beyond_the_monotonic_bound::<FixedWindowRule>(quota, per_window);
    never_beyond_the_monotonic_bound::<SlidingWindowCounterRule>(quota, per_window);
    never_beyond_the_monotonic_bound::<SlidingWindowLogRule>(quota, per_window);
}
