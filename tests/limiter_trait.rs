//! The `RateLimiter` trait: object safety, thread safety, key types and the
//! single-key `DirectLimiter`.

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use tollgate::{
    DirectLimiter, FixedWindow, FixedWindowRule, KeyedLimiter, ManualClock, MonotonicClock, Quota,
    RateLimiter, Registry, SlidingWindowCounter, SlidingWindowCounterRule, SlidingWindowLog,
    SlidingWindowLogRule, TokenBucket, TokenBucketRule,
};

const fn assert_send_sync<T: Send + Sync>() {}

// Compile-time: every limiter may be shared between threads.
const _: () = {
    assert_send_sync::<TokenBucket>();
    assert_send_sync::<FixedWindow<u64, ManualClock>>();
    assert_send_sync::<SlidingWindowCounter<String, MonotonicClock>>();
    assert_send_sync::<SlidingWindowLog<u64>>();
    assert_send_sync::<DirectLimiter<TokenBucketRule>>();
    assert_send_sync::<DirectLimiter<SlidingWindowLogRule, ManualClock>>();
    assert_send_sync::<Registry>();
    assert_send_sync::<Box<dyn RateLimiter<str>>>();
    assert_send_sync::<Arc<dyn RateLimiter<u64>>>();
};

#[test]
fn limiters_are_usable_as_trait_objects() {
    let clock = ManualClock::new();
    let q = Quota::per_minute(2);
    let limiters: Vec<Box<dyn RateLimiter<str>>> = vec![
        Box::new(TokenBucket::<String, _>::with_clock(q, clock.clone())),
        Box::new(FixedWindow::<String, _>::with_clock(q, clock.clone())),
        Box::new(SlidingWindowCounter::<String, _>::with_clock(
            q,
            clock.clone(),
        )),
        Box::new(SlidingWindowLog::<String, _>::with_clock(q, clock)),
    ];
    for limiter in &limiters {
        let by_ref: &dyn RateLimiter<str> = limiter.as_ref();
        assert!(by_ref.allow("k"));
        assert!(by_ref.allow_n("k", 1));
        assert!(!by_ref.allow("k"));
        let d = by_ref.check("k");
        assert!(!d.allowed());
        assert_eq!(d.limit(), 2);
        // `&L` and `Box<L>` are limiters too.
        assert!(!(&by_ref).allow("k"));
        assert!(!limiter.allow("k"));
    }
}

#[test]
fn an_arc_dyn_limiter_is_shared_across_threads() {
    let limiter: Arc<dyn RateLimiter<str>> = Arc::new(TokenBucket::<String, _>::with_clock(
        Quota::per_hour(100),
        ManualClock::new(),
    ));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let limiter = Arc::clone(&limiter);
            thread::spawn(move || (0..50).filter(|_| limiter.allow("shared")).count())
        })
        .collect();
    let admitted: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(admitted, 100);
}

#[test]
fn u64_keys_are_passed_by_reference() {
    let limiter: TokenBucket<u64, ManualClock> =
        TokenBucket::with_clock(Quota::per_second(1), ManualClock::new());
    let key = 42u64;
    assert!(limiter.allow(&key));
    assert!(!limiter.allow(&42));
    assert!(limiter.allow(&43));
    let as_dyn: &dyn RateLimiter<u64> = &limiter;
    assert!(!as_dyn.allow(&43));
}

#[test]
fn allow_n_is_false_when_the_cost_can_never_fit() {
    let limiter: FixedWindow<u64, _> =
        FixedWindow::with_clock(Quota::per_second(3), ManualClock::new());
    assert!(!limiter.allow_n(&1, 4));
    assert!(limiter.check_n(&1, 4).is_err());
    assert!(limiter.allow_n(&1, 3));
}

#[test]
fn direct_limiters_behave_like_a_single_key() {
    fn compare<R: tollgate::Algorithm>(quota: Quota) {
        let clock = ManualClock::new();
        let direct = DirectLimiter::<R, _>::with_clock(quota, clock.clone());
        let keyed = KeyedLimiter::<R, u64, _>::with_clock(quota, clock.clone());
        assert!(direct.is_fresh());
        for step in 0..200u64 {
            clock.advance(Duration::from_millis(step % 7 * 40));
            let cost = step % 4;
            assert_eq!(direct.check_n(cost), keyed.check_n(&9, cost), "step {step}");
            let via_trait: &dyn RateLimiter<()> = &direct;
            assert_eq!(via_trait.check_n(&(), 0), keyed.check_n(&9, 0));
        }
        assert_eq!(
            direct.check_n(quota.limit() + 1).unwrap_err().requested,
            quota.limit() + 1
        );
        clock.advance(Duration::from_secs(10));
        assert!(direct.is_fresh());
    }
    let q = Quota::per_second(3);
    compare::<TokenBucketRule>(q);
    compare::<FixedWindowRule>(q);
    compare::<SlidingWindowCounterRule>(q);
    compare::<SlidingWindowLogRule>(q);
}

#[test]
fn direct_limiter_on_the_default_clock() {
    let limiter = DirectLimiter::<TokenBucketRule>::new(Quota::per_hour(1));
    assert!(limiter.check_n(1).unwrap().allowed());
    assert!(!limiter.check_n(1).unwrap().allowed());
    assert_eq!(limiter.rule().capacity(), 1);
}
