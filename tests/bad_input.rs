//! Bad input gets an error value, never a panic or an overflow.

use std::time::Duration;

use tollgate::{
    Algorithm, DirectLimiter, FixedWindow, FixedWindowRule, InsufficientCapacity, KeyedLimiter,
    ManualClock, Quota, QuotaError, RateLimiter, SlidingWindowCounter, SlidingWindowCounterRule,
    SlidingWindowLog, SlidingWindowLogRule, TokenBucket, TokenBucketRule,
};

fn parse_err(text: &str) -> QuotaError {
    text.parse::<Quota>()
        .expect_err(&format!("{text:?} must not parse"))
}

#[test]
fn quota_new_rejects_zero_and_too_long() {
    let second = Duration::from_secs(1);
    assert_eq!(Quota::new(0, second), Err(QuotaError::ZeroLimit));
    assert_eq!(Quota::new(1, Duration::ZERO), Err(QuotaError::ZeroWindow));
    assert_eq!(Quota::new(0, Duration::ZERO), Err(QuotaError::ZeroLimit));
    assert_eq!(Quota::new(1, Duration::MAX), Err(QuotaError::WindowTooLong));
    // One nanosecond past u64::MAX nanoseconds.
    let just_over = Duration::from_nanos(u64::MAX) + Duration::from_nanos(1);
    assert_eq!(Quota::new(1, just_over), Err(QuotaError::WindowTooLong));
    let longest = Quota::new(u64::MAX, Duration::from_nanos(u64::MAX)).unwrap();
    assert_eq!(longest.window_nanos(), u64::MAX);
}

#[test]
fn unparsable_quotas_give_the_documented_error() {
    let input = |s: &str| s.to_owned();
    assert_eq!(
        parse_err(""),
        QuotaError::MissingSeparator { input: input("") }
    );
    assert_eq!(
        parse_err("100"),
        QuotaError::MissingSeparator {
            input: input("100")
        }
    );
    assert_eq!(
        parse_err("/minute"),
        QuotaError::MissingLimit {
            input: input("/minute")
        }
    );
    assert_eq!(
        parse_err("abc/s"),
        QuotaError::InvalidLimit { text: input("abc") }
    );
    assert_eq!(
        parse_err("10/fortnight"),
        QuotaError::UnknownUnit {
            unit: input("fortnight")
        }
    );
    // A zero limit is a whole number, just one that admits nothing.
    assert_eq!(parse_err("0/s"), QuotaError::ZeroLimit);
    assert_eq!(parse_err("10/0s"), QuotaError::ZeroWindow);
    assert_eq!(
        parse_err("-5/s"),
        QuotaError::InvalidLimit { text: input("-5") }
    );
    assert_eq!(
        parse_err("1.5/s"),
        QuotaError::InvalidLimit { text: input("1.5") }
    );
    assert_eq!(
        parse_err("99999999999999999999/s"),
        QuotaError::InvalidLimit {
            text: input("99999999999999999999")
        }
    );
    assert_eq!(
        parse_err("100/"),
        QuotaError::MissingUnit {
            input: input("100/")
        }
    );
    assert_eq!(
        parse_err("1/99999999999999999999s"),
        QuotaError::InvalidWindowCount {
            text: input("99999999999999999999")
        }
    );
    // 10^6 days is about 2739 years: more than u64 nanoseconds hold.
    assert_eq!(parse_err("1/1000000d"), QuotaError::WindowTooLong);
    assert_eq!(
        parse_err("+5/s"),
        QuotaError::InvalidLimit { text: input("+5") }
    );
}

#[test]
fn every_error_displays_a_message() {
    for text in [
        "",
        "/s",
        "x/s",
        "1/x",
        "1/",
        "1/99999999999999999999s",
        "0/s",
    ] {
        assert!(!parse_err(text).to_string().is_empty());
    }
}

#[test]
fn fixed_window_limits_saturate_at_u32_max_minus_1() {
    let max = u64::from(u32::MAX) - 1;
    for limit in [max, max + 1, u64::MAX] {
        let limiter: FixedWindow<u64, _> =
            FixedWindow::with_clock(Quota::per_second(limit), ManualClock::new());
        assert_eq!(
            limiter.check_n(&1, max + 1),
            Err(InsufficientCapacity {
                requested: max + 1,
                max
            })
        );
        let d = limiter.check_n(&1, max).unwrap();
        assert!(d.allowed());
        assert_eq!((d.limit(), d.remaining()), (max, 0));
        assert!(!limiter.allow(&1));
    }
}

#[test]
fn sliding_counter_limits_saturate_at_2_pow_24_minus_2() {
    let max = (1u64 << 24) - 2;
    for limit in [max, max + 1, u64::MAX] {
        let limiter: SlidingWindowCounter<u64, _> =
            SlidingWindowCounter::with_clock(Quota::per_second(limit), ManualClock::new());
        assert_eq!(limiter.check_n(&1, max + 1).unwrap_err().max, max);
        let d = limiter.check_n(&1, max).unwrap();
        assert!(d.allowed());
        assert_eq!((d.limit(), d.remaining()), (max, 0));
        assert!(!limiter.allow(&1));
    }
}

#[test]
fn token_bucket_capacity_saturates_at_2_pow_62_nanoseconds() {
    // T = ⌈1e9 / (2^64 - 1)⌉ = 1 ns; τ = min((2^64 - 1)·1, 2^62) = 2^62.
    let limiter: TokenBucket<u64, _> =
        TokenBucket::with_clock(Quota::per_second(u64::MAX), ManualClock::new());
    let cap = 1u64 << 62;
    assert_eq!(limiter.check_n(&1, cap + 1).unwrap_err().max, cap);
    let d = limiter.check_n(&1, cap).unwrap();
    assert!(d.allowed());
    assert_eq!((d.limit(), d.remaining()), (cap, 0));
    let d = limiter.check(&1);
    assert!(!d.allowed());
    assert_eq!(d.retry_after_nanos(), 1);
}

#[test]
fn sliding_log_with_the_largest_limit_does_not_overflow() {
    let limiter: SlidingWindowLog<u64, _> =
        SlidingWindowLog::with_clock(Quota::per_second(u64::MAX), ManualClock::new());
    assert!(limiter.allow_n(&1, u64::MAX - 1));
    let d = limiter.check_n(&1, 2).unwrap();
    assert!(!d.allowed());
    assert_eq!((d.remaining(), d.retry_after_nanos()), (1, 1_000_000_000));
    assert!(limiter.allow(&1));
    let d = limiter.check_n(&1, u64::MAX).unwrap();
    assert!(!d.allowed());
    assert_eq!(d.remaining(), 0);
}

/// Runs a burst of requests with costs near the limits at `now`.
fn poke<A: Algorithm>(limiter: &KeyedLimiter<A, u64, ManualClock>) {
    for key in 0..3 {
        for cost in [0, 1, 2, u64::MAX / 2, u64::MAX - 1, u64::MAX] {
            if let Ok(d) = limiter.check_n(&key, cost) {
                assert!(d.remaining() <= d.limit());
            }
        }
    }
    assert!(limiter.evict_idle() <= 3);
}

/// Every algorithm with `quota`, with the clock walked up to `u64::MAX`.
fn survives_the_end_of_time(quota: Quota) {
    fn run<A: Algorithm>(quota: Quota) {
        let clock = ManualClock::new();
        let limiter = KeyedLimiter::<A, u64, ManualClock>::with_clock(quota, clock.clone());
        let direct = DirectLimiter::<A, ManualClock>::with_clock(quota, clock.clone());
        let near_end = [
            u64::MAX / 2,
            u64::MAX - (1 << 40),
            u64::MAX - 2,
            u64::MAX - 1,
        ];
        for at in near_end.into_iter().chain([u64::MAX, u64::MAX]) {
            poke(&limiter);
            let _ = direct.check_n(1);
            let _ = direct.check_n(u64::MAX);
            clock.set(Duration::from_nanos(at));
        }
        clock.advance(Duration::MAX);
        poke(&limiter);
        assert_eq!(clock.elapsed(), Duration::from_nanos(u64::MAX));
    }
    run::<TokenBucketRule>(quota);
    run::<FixedWindowRule>(quota);
    run::<SlidingWindowCounterRule>(quota);
    run::<SlidingWindowLogRule>(quota);
}

#[test]
fn a_clock_near_u64_max_never_panics() {
    survives_the_end_of_time(Quota::per_second(10));
    survives_the_end_of_time(Quota::new(3, Duration::from_nanos(7)).unwrap());
    survives_the_end_of_time(Quota::per_hour(1).with_burst(u64::MAX));
}

/// Near the end of the clock's range a token bucket stays a limit: it
/// refuses what it cannot record instead of dropping the debt (it once
/// admitted every request from about 2^64 ns minus its capacity's worth).
#[test]
fn a_token_bucket_at_the_end_of_the_clock_admits_no_more_than_its_quota() {
    let clock = ManualClock::new();
    clock.set(Duration::from_nanos(u64::MAX) - Duration::from_secs(5 * 3600));
    let quota = Quota::per_hour(1).with_burst(10);
    let keyed: TokenBucket<u64, ManualClock> = TokenBucket::with_clock(quota, clock.clone());
    let direct = DirectLimiter::<TokenBucketRule, ManualClock>::with_clock(quota, clock.clone());
    let mut admitted = [0, 0, 0];
    for _ in 0..1_000 {
        admitted[0] += u32::from(keyed.allow(&1u64));
        admitted[1] += u32::from(keyed.check_n(&2u64, 1).unwrap().allowed());
        admitted[2] += u32::from(direct.allow());
    }
    // Five hours before the end: at most the burst, wherever the end cuts it.
    for count in admitted {
        assert!((1..=10).contains(&count), "admitted {admitted:?}");
    }
    clock.advance(Duration::MAX);
    assert!(!keyed.allow(&1u64) && !direct.allow());
}

#[test]
fn windows_near_u64_max_nanoseconds_work() {
    let longest = Duration::from_nanos(u64::MAX);
    for limit in [1, 5, u64::MAX] {
        survives_the_end_of_time(Quota::new(limit, longest).unwrap());
        survives_the_end_of_time(Quota::new(limit, longest - Duration::from_nanos(1)).unwrap());
    }
}

#[test]
fn one_unit_per_longest_window_admits_one_unit() {
    // One unit per ~584 years (and per ~292 years, just over 2^63 ns): the
    // first passes, the second must wait until the window is over.
    for nanos in [u64::MAX, (1 << 63) + 1] {
        fn run<A: Algorithm>(nanos: u64) {
            let quota = Quota::new(1, Duration::from_nanos(nanos)).unwrap();
            let clock = ManualClock::new();
            let limiter = KeyedLimiter::<A, u64, ManualClock>::with_clock(quota, clock.clone());
            clock.set(Duration::from_nanos(5));
            assert!(limiter.allow(&1));
            clock.set(Duration::from_nanos(10));
            let d = limiter.check(&1);
            assert!(!d.allowed(), "{nanos}: {d:?}");
            // Waiting is always long: at least the window less 10 ns, and
            // 1 ns less where the bucket's time saturates (at 2^64 - 2, one
            // below the word a retired state holds).
            assert!(d.retry_after_nanos() >= nanos - 11, "{nanos}: {d:?}");
        }
        run::<TokenBucketRule>(nanos);
        run::<FixedWindowRule>(nanos);
        run::<SlidingWindowCounterRule>(nanos);
        run::<SlidingWindowLogRule>(nanos);
    }
}

#[test]
fn costs_near_u64_max_are_errors() {
    let clock = ManualClock::new();
    let q = Quota::per_second(10);
    let limiters: Vec<Box<dyn RateLimiter<str>>> = vec![
        Box::new(TokenBucket::<String, _>::with_clock(q, clock.clone())),
        Box::new(FixedWindow::<String, _>::with_clock(q, clock.clone())),
        Box::new(SlidingWindowCounter::<String, _>::with_clock(
            q,
            clock.clone(),
        )),
        Box::new(SlidingWindowLog::<String, _>::with_clock(q, clock.clone())),
    ];
    for limiter in &limiters {
        for cost in [11, u64::MAX / 2, u64::MAX - 1, u64::MAX] {
            assert_eq!(
                limiter.check_n("k", cost),
                Err(InsufficientCapacity {
                    requested: cost,
                    max: 10
                })
            );
            assert!(!limiter.allow_n("k", cost));
        }
        assert!(limiter.allow_n("k", 10), "errors consumed nothing");
    }
}

/// `Algorithm::check` is public, so a caller can skip the limiters' cost
/// check: a cost far over the limit is then a refusal, not an overflow.
fn too_much_refused_by<A: Algorithm>(quota: Quota) {
    let rule = A::from_quota(&quota);
    let state = rule.fresh();
    // One unit spent first, so the state's own count is not zero.
    assert!(rule.check(&state, 5, 1).unwrap().allowed(), "{quota}");
    for cost in [rule.max_cost() + 1, u64::MAX / 2, u64::MAX] {
        let decision = rule.check(&state, 5, cost).expect("the state is live");
        assert!(!decision.allowed(), "{quota}: cost {cost}");
    }
    // The refusals spent nothing: a peek still sees one unit gone.
    let peek = rule.check(&state, 5, 0).unwrap();
    assert_eq!(peek.remaining(), rule.max_cost() - 1, "{quota}");
}

#[test]
fn a_rule_asked_directly_for_too_much_refuses() {
    let quotas = [
        Quota::per_second(10),
        Quota::new(3, Duration::from_nanos(u64::MAX)).unwrap(),
    ];
    for quota in quotas {
        too_much_refused_by::<TokenBucketRule>(quota);
        too_much_refused_by::<FixedWindowRule>(quota);
        too_much_refused_by::<SlidingWindowCounterRule>(quota);
        too_much_refused_by::<SlidingWindowLogRule>(quota);
    }
}
