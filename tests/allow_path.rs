//! `allow` and `allow_n` answer from a path that computes no figures; these
//! tests drive one limiter through `check_n` and a twin through `allow_n`
//! with the same requests and clock, and require the same answers and the
//! same states afterwards (judged by a final peek on each), on a few keys
//! asked often and on many keys asked once (each a first request).

use std::sync::Arc;
use std::time::Duration;

use tollgate::{
    Algorithm, DirectLimiter, FixedWindow, KeyedLimiter, KeyedOptions, ManualClock, Quota,
    RateLimiter, SlidingWindowCounter, SlidingWindowLog, TokenBucket, TokenBucketRule,
};

/// A xorshift generator: the same request sequence for both twins.
struct Requests(u64);

impl Requests {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// 2,000 requests with costs from 0 (a peek) to one above the capacity,
/// on three keys, with the clock moving by up to 80 ms between them.
fn compare_twins<A: Algorithm>(quota: Quota) {
    let clock = ManualClock::new();
    let checked: KeyedLimiter<A, String, ManualClock> =
        KeyedLimiter::with_clock(quota, clock.clone());
    let allowed: KeyedLimiter<A, String, ManualClock> =
        KeyedLimiter::with_clock(quota, clock.clone());
    let capacity = checked.check_n("probe", 0).expect("a peek").limit();
    let mut requests = Requests(0x9e37_79b9_7f4a_7c15);
    let mut admitted = 0;
    for step in 0..2_000 {
        let key = ["a", "b", "c"][requests.below(3) as usize];
        let cost = requests.below(capacity + 2);
        let expected = checked.check_n(key, cost).is_ok_and(|d| d.allowed());
        let answer = if cost == 1 && step % 2 == 0 {
            allowed.allow(key)
        } else {
            allowed.allow_n(key, cost)
        };
        assert_eq!(answer, expected, "step {step}: {cost} units for {key}");
        admitted += u64::from(answer);
        clock.advance(Duration::from_millis(requests.below(80)));
    }
    assert!(
        admitted > 100,
        "only {admitted} admitted: the sequence tests too little"
    );
    for key in ["a", "b", "c"] {
        assert_eq!(
            checked.check_n(key, 0).ok(),
            allowed.check_n(key, 0).ok(),
            "{key}"
        );
    }
}

/// First requests (`allow_n`'s own slow path): 300 new keys, each asked
/// once with a cost from 0 (a peek, which must not track the key) to one
/// above the capacity, then peeked, on twins whose key cap of 100 refuses
/// the later keys.
fn compare_twins_on_new_keys<A: Algorithm>(quota: Quota) {
    let clock = ManualClock::new();
    let options = KeyedOptions::new().max_keys(100).auto_sweep(false);
    let checked: KeyedLimiter<A, u64, ManualClock> =
        KeyedLimiter::with_options(quota, clock.clone(), options);
    let allowed: KeyedLimiter<A, u64, ManualClock> =
        KeyedLimiter::with_options(quota, clock.clone(), options);
    let capacity = checked.check_n(&u64::MAX, 0).expect("a peek").limit();
    let mut requests = Requests(0x2545_f491_4f6c_dd1d);
    let (mut admitted, mut refused) = (0, 0);
    for key in 0..300 {
        let cost = requests.below(capacity + 2);
        let expected = checked.check_n(&key, cost).is_ok_and(|d| d.allowed());
        let answer = allowed.allow_n(&key, cost);
        assert_eq!(answer, expected, "key {key}: {cost} units");
        admitted += u64::from(answer);
        refused += u64::from(!answer && (1..=capacity).contains(&cost));
        assert_eq!(
            checked.check_n(&key, 0).ok(),
            allowed.check_n(&key, 0).ok(),
            "key {key} after its first request"
        );
        clock.advance(Duration::from_millis(requests.below(5)));
    }
    assert_eq!(allowed.len(), checked.len());
    assert!(allowed.len() <= 100, "{} keys over the cap", allowed.len());
    // A sweep at the cap makes room by dropping idle keys, so some later
    // keys pass too.
    assert!(
        admitted > 50 && refused > 10,
        "{admitted} admitted, {refused} refused at the cap: the sequence tests too little"
    );
}

#[test]
fn token_bucket_allow_agrees_with_check() {
    compare_twins::<TokenBucketRule>(Quota::per_second(10).with_burst(5));
    compare_twins_on_new_keys::<TokenBucketRule>(Quota::per_second(10).with_burst(5));
}

#[test]
fn fixed_window_allow_agrees_with_check() {
    compare_twins::<tollgate::FixedWindowRule>(Quota::per_second(7));
    compare_twins_on_new_keys::<tollgate::FixedWindowRule>(Quota::per_second(7));
}

#[test]
fn sliding_window_counter_allow_agrees_with_check() {
    compare_twins::<tollgate::sliding_window_counter::SlidingWindowCounterRule>(Quota::per_second(
        6,
    ));
    compare_twins_on_new_keys::<tollgate::sliding_window_counter::SlidingWindowCounterRule>(
        Quota::per_second(6),
    );
}

#[test]
fn sliding_window_log_allow_agrees_with_check() {
    compare_twins::<tollgate::sliding_window_log::SlidingWindowLogRule>(Quota::per_second(5));
    compare_twins_on_new_keys::<tollgate::sliding_window_log::SlidingWindowLogRule>(
        Quota::per_second(5),
    );
}

#[test]
fn a_cost_that_never_fits_is_refused_without_changing_the_state() {
    let clock = ManualClock::new();
    let limiter: TokenBucket<String, _> = TokenBucket::with_clock(Quota::per_second(3), clock);
    assert!(!limiter.allow_n("k", 4));
    assert!(!limiter.allow_n("k", u64::MAX));
    assert_eq!(limiter.check_n("k", 0).expect("a peek").remaining(), 3);
    assert!(limiter.allow_n("k", 3));
    assert!(!limiter.allow("k"));
}

#[test]
fn a_peek_through_allow_spends_nothing() {
    let clock = ManualClock::new();
    let limiter: FixedWindow<u64, _> = FixedWindow::with_clock(Quota::per_second(1), clock);
    assert!(limiter.allow_n(&9, 0));
    assert!(limiter.allow_n(&9, 0));
    assert!(limiter.allow(&9));
    assert!(
        !limiter.allow_n(&9, 0),
        "a peek after the limit reports a refusal"
    );
    assert!(!limiter.allow(&9));
}

/// `Arc`, `Box` and `&` forward `allow` to the limiter they hold, and a
/// trait object reaches the same state.
#[test]
fn wrappers_and_trait_objects_allow_on_the_same_state() {
    let clock = ManualClock::new();
    let limiter = Arc::new(SlidingWindowCounter::<String, _>::with_clock(
        Quota::per_second(4),
        clock,
    ));
    let boxed: Box<dyn RateLimiter<str>> = Box::new(Arc::clone(&limiter));
    assert!(limiter.allow("k"));
    assert!(boxed.allow("k"));
    let by_ref: &SlidingWindowCounter<String, ManualClock> = &limiter;
    assert!(RateLimiter::allow_n(&by_ref, "k", 2));
    assert!(!boxed.allow("k"));
    assert!(!limiter.allow("k"));
    assert_eq!(limiter.check_n("k", 0).expect("a peek").remaining(), 0);
    let log: SlidingWindowLog<String, _> =
        SlidingWindowLog::with_clock(Quota::per_second(1), ManualClock::new());
    assert!(log.allow("k") && !log.allow("k"));
}

#[test]
fn a_direct_limiter_allows_as_it_checks() {
    let clock = ManualClock::new();
    let quota = Quota::per_second(10).with_burst(4);
    let checked = DirectLimiter::<TokenBucketRule, _>::with_clock(quota, clock.clone());
    let allowed = DirectLimiter::<TokenBucketRule, _>::with_clock(quota, clock.clone());
    let mut requests = Requests(77);
    for step in 0..1_000 {
        let cost = requests.below(6);
        let expected = checked.check_n(cost).is_ok_and(|d| d.allowed());
        let answer = match step % 3 {
            0 => allowed.allow_n(cost),
            1 => RateLimiter::allow_n(&allowed, &(), cost),
            _ if cost == 1 => allowed.allow(),
            _ => allowed.allow_n(cost),
        };
        assert_eq!(answer, expected, "step {step}: cost {cost}");
        clock.advance(Duration::from_millis(requests.below(150)));
    }
    assert_eq!(checked.check_n(0).ok(), allowed.check_n(0).ok());
}
