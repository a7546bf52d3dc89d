//! Token bucket boundaries on a manual clock. Expected figures follow the
//! module docs: `T = ⌈window / limit⌉`, `τ = burst·T`, and a request of `n`
//! passes when `debt + n·T ≤ τ`.

use std::time::Duration;

use tollgate::{InsufficientCapacity, ManualClock, Quota, RateLimiter, TokenBucket};

const MS: u64 = 1_000_000;

fn bucket(quota: Quota) -> (TokenBucket<String, ManualClock>, ManualClock) {
    let clock = ManualClock::new();
    (TokenBucket::with_clock(quota, clock.clone()), clock)
}

fn nanos(n: u64) -> Duration {
    Duration::from_nanos(n)
}

#[test]
fn a_full_bucket_admits_exactly_the_burst() {
    // 10/s: T = 100 ms, τ = 1 s, capacity 10.
    let (limiter, _clock) = bucket(Quota::per_second(10));
    for spent in 1..=10u64 {
        let d = limiter.check("k");
        assert!(d.allowed());
        assert_eq!(d.limit(), 10);
        assert_eq!(d.remaining(), 10 - spent);
        // Full again after `spent` tokens are refilled.
        assert_eq!(d.reset_after_nanos(), spent * 100 * MS);
        assert_eq!(d.retry_after_nanos(), 0);
    }
    let d = limiter.check("k");
    assert!(!d.allowed());
    assert_eq!(d.remaining(), 0);
    // debt 1 s + T - τ = 100 ms.
    assert_eq!(d.retry_after_nanos(), 100 * MS);
    assert_eq!(d.reset_after_nanos(), 1_000 * MS);
}

#[test]
fn a_token_returns_exactly_one_interval_later() {
    let (limiter, clock) = bucket(Quota::per_second(10));
    assert!(limiter.allow_n("k", 10));
    clock.advance(nanos(100 * MS - 1));
    let d = limiter.check("k");
    assert!(!d.allowed());
    assert_eq!(d.retry_after_nanos(), 1);
    clock.advance(nanos(1));
    let d = limiter.check("k");
    assert!(d.allowed());
    assert_eq!(d.remaining(), 0);
    assert!(!limiter.allow("k"));
}

#[test]
fn fractional_rates_round_the_interval_up() {
    // 3/s: T = ⌈1e9 / 3⌉ = 333_333_334 ns.
    let t = 333_333_334;
    let (limiter, clock) = bucket(Quota::new(3, Duration::from_secs(1)).unwrap());
    assert!(limiter.allow_n("k", 3));
    clock.advance(nanos(t - 1));
    assert_eq!(limiter.check("k").retry_after_nanos(), 1);
    clock.advance(nanos(1));
    assert!(limiter.allow("k"));
    // Exactly one second after emptying, only ⌊1e9 / T⌋ = 2 tokens are back:
    // the bucket never refills faster than the quota.
    let (limiter, clock) = bucket(Quota::new(3, Duration::from_secs(1)).unwrap());
    assert!(limiter.allow_n("k", 3));
    clock.advance(Duration::from_secs(1));
    assert_eq!(limiter.check_n("k", 0).unwrap().remaining(), 2);
    // 3·T = 1_000_000_002 ns: the third token is 2 ns away.
    assert!(!limiter.allow_n("k", 3));
    assert_eq!(limiter.check_n("k", 3).unwrap().retry_after_nanos(), 2);
}

#[test]
fn burst_sets_the_capacity_and_limit_sets_the_rate() {
    // 2/s with burst 5: T = 500 ms, τ = 2.5 s.
    let (limiter, clock) = bucket(Quota::per_second(2).with_burst(5));
    let d = limiter.check_n("k", 5).unwrap();
    assert!(d.allowed());
    assert_eq!((d.limit(), d.remaining()), (5, 0));
    assert_eq!(d.reset_after_nanos(), 2_500 * MS);
    clock.advance(Duration::from_secs(1));
    // One second refills 2 tokens.
    assert_eq!(limiter.check_n("k", 0).unwrap().remaining(), 2);
    assert!(limiter.allow_n("k", 2));
    assert!(!limiter.allow("k"));
}

#[test]
fn weighted_costs_spend_several_tokens() {
    let (limiter, _clock) = bucket(Quota::per_second(10));
    let d = limiter.check_n("k", 4).unwrap();
    assert!(d.allowed());
    assert_eq!((d.remaining(), d.reset_after_nanos()), (6, 400 * MS));
    // debt 400 ms + 7·T = 1.1 s > τ: short by 100 ms.
    let d = limiter.check_n("k", 7).unwrap();
    assert!(!d.allowed());
    assert_eq!(d.remaining(), 6);
    assert_eq!(d.retry_after_nanos(), 100 * MS);
    assert_eq!(d.reset_after_nanos(), 400 * MS);
    let d = limiter.check_n("k", 6).unwrap();
    assert!(d.allowed());
    assert_eq!(d.remaining(), 0);
}

#[test]
fn cost_zero_peeks_without_consuming() {
    let (limiter, _clock) = bucket(Quota::per_second(10));
    let d = limiter.check_n("k", 0).unwrap();
    assert!(d.allowed());
    assert_eq!((d.remaining(), d.reset_after_nanos()), (10, 0));
    assert_eq!(limiter.len(), 0, "a peek does not start tracking a key");
    for _ in 0..100 {
        assert!(limiter.check_n("k", 0).unwrap().allowed());
    }
    assert!(limiter.allow_n("k", 3));
    let d = limiter.check_n("k", 0).unwrap();
    assert_eq!((d.remaining(), d.reset_after_nanos()), (7, 300 * MS));
    assert!(limiter.allow_n("k", 7));
    // Empty: a peek answers like a one-unit request would.
    let d = limiter.check_n("k", 0).unwrap();
    assert!(!d.allowed());
    assert_eq!((d.remaining(), d.retry_after_nanos()), (0, 100 * MS));
}

#[test]
fn costs_above_the_capacity_are_errors_and_change_nothing() {
    let (limiter, _clock) = bucket(Quota::per_second(10));
    assert_eq!(
        limiter.check_n("k", 11),
        Err(InsufficientCapacity {
            requested: 11,
            max: 10
        })
    );
    assert!(!limiter.allow_n("k", 11));
    assert!(limiter.allow_n("k", 10));
}

#[test]
fn denied_calls_do_not_consume() {
    let (limiter, clock) = bucket(Quota::per_second(10));
    assert!(limiter.allow_n("k", 10));
    for _ in 0..1_000 {
        assert!(!limiter.allow("k"));
        assert!(!limiter.allow_n("k", 5));
    }
    clock.advance(nanos(100 * MS));
    // Exactly the one refilled token, as if nothing had been denied.
    assert!(limiter.allow("k"));
    assert!(!limiter.allow("k"));
}

#[test]
fn keys_have_separate_buckets() {
    let (limiter, _clock) = bucket(Quota::per_second(2));
    assert!(limiter.allow_n("a", 2));
    assert!(!limiter.allow("a"));
    assert!(limiter.allow_n("b", 2));
    assert_eq!(limiter.len(), 2);
}

#[test]
fn an_idle_bucket_never_holds_more_than_its_capacity() {
    let (limiter, clock) = bucket(Quota::per_second(10));
    assert!(limiter.allow("k"));
    clock.advance(Duration::from_secs(3_600));
    let d = limiter.check_n("k", 0).unwrap();
    assert_eq!((d.remaining(), d.reset_after_nanos()), (10, 0));
    assert!(limiter.allow_n("k", 10));
    assert!(!limiter.allow("k"));
}
