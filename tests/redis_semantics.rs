//! Each Redis script decides exactly like the in-memory algorithm of the
//! same name: the same requests at the same (injected) times get the same
//! decisions, blocking and async.
#![cfg(feature = "redis")]

mod redis_support;

use std::time::Duration;

use tollgate::redis::{
    AsyncRedisLimiter, FixedWindowScript, RedisAlgorithm, RedisLimiter, RedisOptions,
    SlidingWindowCounterScript, SlidingWindowLogScript, TokenBucketScript,
};
use tollgate::{Decision, InsufficientCapacity, KeyedLimiter, ManualClock, Quota, RateLimiter};

/// A small deterministic generator (xorshift64*), so failures replay.
struct Steps(u64);

impl Steps {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// One request: advance the clock, then spend `cost` for `key`.
#[derive(Clone, Debug)]
struct Request {
    advance_micros: u64,
    key: &'static str,
    cost: u64,
    /// Repeat the previous request instead, if it was rejected, just before
    /// or exactly at its retry time (1 or 0 µs early): decisions at the
    /// boundaries.
    retry_early: Option<u64>,
}

impl Request {
    /// This request, or the retry of `previous` it stands for.
    fn resolve(&self, previous: Option<&(Request, Decision)>) -> Request {
        match (self.retry_early, previous) {
            (Some(early), Some((request, decision))) if !decision.allowed() => Request {
                advance_micros: (decision.retry_after_nanos() / 1000).saturating_sub(early),
                retry_early: None,
                ..request.clone()
            },
            _ => self.clone(),
        }
    }
}

/// Requests mixing peeks, unit and bulk costs, impossible costs, bursts at
/// one instant, gaps within a window and gaps of several windows.
fn requests(seed: u64, quota: Quota, count: usize) -> Vec<Request> {
    let mut steps = Steps(seed);
    let window = quota.window_nanos() / 1000;
    let spacing = window / quota.limit().max(1);
    let largest = quota.limit().max(quota.burst());
    (0..count)
        .map(|_| {
            let advance_micros = match steps.below(10) {
                0..=2 => 0,
                3..=6 => steps.below(spacing * 2 + 1),
                7 | 8 => steps.below(window + 1),
                _ => steps.below(window * 3 + 1),
            };
            let cost = match steps.below(20) {
                0 | 1 => 0,
                2..=12 => 1,
                13..=18 => 1 + steps.below(largest),
                _ => largest + 1 + steps.below(3),
            };
            let key = ["a", "b", "c"][steps.below(3) as usize];
            let retry_early = (steps.below(5) == 0).then(|| steps.below(2));
            Request {
                advance_micros,
                key,
                cost,
                retry_early,
            }
        })
        .collect()
}

/// The quotas each algorithm is compared under; every token interval and
/// window is a whole number of microseconds.
fn quotas() -> Vec<Quota> {
    vec![
        Quota::per_second(5),
        Quota::per_second(10).with_burst(4),
        Quota::new(7, Duration::from_millis(700)).unwrap(),
        Quota::new(3, Duration::from_millis(9)).unwrap(),
        Quota::new(1, Duration::from_secs(60)).unwrap(),
        Quota::new(40, Duration::from_secs(2))
            .unwrap()
            .with_burst(60),
    ]
}

/// `nanos` rounded up to a whole `grain` of microseconds.
fn round_up(nanos: u64, grain_micros: u64) -> u64 {
    let grain = grain_micros * 1000;
    nanos.div_ceil(grain).saturating_mul(grain)
}

/// An in-memory decision as Redis reports it: figures in whole grains of
/// microseconds (one microsecond unless the script counts coarser time).
fn in_grains(decision: Decision, grain_micros: u64) -> Decision {
    let reset = round_up(decision.reset_after_nanos(), grain_micros);
    if decision.allowed() {
        Decision::admit(decision.limit(), decision.remaining(), reset)
    } else {
        Decision::reject(
            decision.limit(),
            decision.remaining(),
            round_up(decision.retry_after_nanos(), grain_micros),
            reset,
        )
    }
}

/// Which kinds of answers a sequence produced, so a comparison that only
/// ever saw one kind cannot pass unnoticed.
#[derive(Default)]
struct Seen {
    admitted: usize,
    rejected: usize,
    impossible: usize,
}

impl Seen {
    fn note(&mut self, answer: &Result<Decision, InsufficientCapacity>) {
        match answer {
            Ok(decision) if decision.allowed() => self.admitted += 1,
            Ok(_) => self.rejected += 1,
            Err(_) => self.impossible += 1,
        }
    }

    fn assert_covered(&self, test: &str, quota: Quota) {
        assert!(
            self.admitted > 0 && self.rejected > 0 && self.impossible > 0,
            "{test}: quota {quota}: admitted {}, rejected {}, impossible {}",
            self.admitted,
            self.rejected,
            self.impossible
        );
    }
}

fn options(prefix: &str, clock: &ManualClock) -> RedisOptions {
    RedisOptions::new()
        .prefix(prefix)
        .injected_clock(clock.clone())
        .timeout(Duration::from_secs(5))
}

fn compare_blocking<A: RedisAlgorithm>(test: &str) {
    compare_blocking_in_grains::<A>(test, quotas(), 1);
}

/// Compares with every time step a multiple of `grain_micros`.
fn compare_blocking_in_grains<A: RedisAlgorithm>(
    test: &str,
    quotas: Vec<Quota>,
    grain_micros: u64,
) {
    let Some(redis) = redis_support::redis(test) else {
        return;
    };
    for (index, quota) in quotas.into_iter().enumerate() {
        let clock = ManualClock::new();
        clock.set(Duration::from_secs(1_000));
        let memory: KeyedLimiter<A::Local, String, ManualClock> =
            KeyedLimiter::with_clock(quota, clock.clone());
        let prefix = redis_support::unique_prefix(test);
        let remote: RedisLimiter<A> =
            RedisLimiter::with_options(quota, redis.client(), options(&prefix, &clock)).unwrap();
        let mut seen = Seen::default();
        let mut previous = None;
        for (step, request) in requests(index as u64 + 1, quota, 400).iter().enumerate() {
            let request = request.resolve(previous.as_ref());
            let advance = request.advance_micros.div_ceil(grain_micros) * grain_micros;
            clock.advance(Duration::from_micros(advance));
            let expected: Result<Decision, InsufficientCapacity> = memory
                .check_n(request.key, request.cost)
                .map(|decision| in_grains(decision, grain_micros));
            let got = match remote.try_check_n(request.key, request.cost) {
                Ok(decision) => Ok(decision),
                Err(tollgate::redis::RedisLimitError::InsufficientCapacity(error)) => Err(error),
                Err(error) => panic!("{test}: Redis failed at step {step}: {error}"),
            };
            assert_eq!(
                got,
                expected,
                "{test}: quota {quota}, step {step}, request {request:?}, at {:?}",
                clock.elapsed()
            );
            seen.note(&got);
            if let Ok(decision) = got {
                previous = Some((request, decision));
            }
        }
        seen.assert_covered(test, quota);
    }
}

#[test]
fn token_bucket_matches_memory() {
    compare_blocking::<TokenBucketScript>("token_bucket_matches_memory");
}

#[test]
fn fixed_window_matches_memory() {
    compare_blocking::<FixedWindowScript>("fixed_window_matches_memory");
}

#[test]
fn sliding_window_log_matches_memory() {
    compare_blocking::<SlidingWindowLogScript>("sliding_window_log_matches_memory");
}

#[test]
fn sliding_window_counter_matches_memory() {
    compare_blocking::<SlidingWindowCounterScript>("sliding_window_counter_matches_memory");
}

/// At a limit of a million a day, `limit·W` in microseconds passes 2^50, so
/// the script counts time in units of 100 µs; decisions on that grid still
/// match, with figures rounded up to the unit.
#[test]
fn sliding_window_counter_with_a_coarse_unit_matches_memory() {
    let quota = Quota::new(1_000_000, Duration::from_secs(86_400)).unwrap();
    compare_blocking_in_grains::<SlidingWindowCounterScript>(
        "sliding_window_counter_with_a_coarse_unit_matches_memory",
        vec![quota],
        100,
    );
}

async fn compare_async<A: RedisAlgorithm>(test: &str) {
    let Some(redis) = redis_support::redis(test) else {
        return;
    };
    let connection = redis
        .client()
        .get_multiplexed_async_connection()
        .await
        .expect("an async connection");
    for (index, quota) in quotas().into_iter().enumerate() {
        let clock = ManualClock::new();
        clock.set(Duration::from_secs(5_000));
        let memory: KeyedLimiter<A::Local, String, ManualClock> =
            KeyedLimiter::with_clock(quota, clock.clone());
        let prefix = redis_support::unique_prefix(test);
        let remote: AsyncRedisLimiter<A, _> =
            AsyncRedisLimiter::with_options(quota, connection.clone(), options(&prefix, &clock))
                .unwrap();
        let mut seen = Seen::default();
        let mut previous = None;
        for (step, request) in requests(index as u64 + 100, quota, 200).iter().enumerate() {
            let request = request.resolve(previous.as_ref());
            clock.advance(Duration::from_micros(request.advance_micros));
            let expected = memory
                .check_n(request.key, request.cost)
                .map(|decision| in_grains(decision, 1));
            let outcome = remote.check_detailed(request.key, request.cost).await;
            if let Ok(outcome) = &outcome {
                assert!(
                    outcome.is_from_redis(),
                    "{test}: Redis failed at step {step}: {:?}",
                    outcome.backend_error()
                );
            }
            let got = outcome.map(|outcome| outcome.decision());
            assert_eq!(
                got, expected,
                "{test}: quota {quota}, step {step}, {request:?}"
            );
            seen.note(&got);
            if let Ok(decision) = got {
                previous = Some((request, decision));
            }
        }
        seen.assert_covered(test, quota);
    }
}

#[tokio::test]
async fn async_token_bucket_matches_memory() {
    compare_async::<TokenBucketScript>("async_token_bucket_matches_memory").await;
}

#[tokio::test]
async fn async_fixed_window_matches_memory() {
    compare_async::<FixedWindowScript>("async_fixed_window_matches_memory").await;
}

#[tokio::test]
async fn async_sliding_window_log_matches_memory() {
    compare_async::<SlidingWindowLogScript>("async_sliding_window_log_matches_memory").await;
}

#[tokio::test]
async fn async_sliding_window_counter_matches_memory() {
    compare_async::<SlidingWindowCounterScript>("async_sliding_window_counter_matches_memory")
        .await;
}

/// Figures worked out by hand from the quota, not from either implementation.
#[test]
fn token_bucket_figures_follow_the_quota() {
    let test = "token_bucket_figures_follow_the_quota";
    let Some(redis) = redis_support::redis(test) else {
        return;
    };
    let clock = ManualClock::new();
    let prefix = redis_support::unique_prefix(test);
    // 2 per second: a token every 500 ms, a bucket of 2.
    let limiter: RedisLimiter<TokenBucketScript> = RedisLimiter::with_options(
        Quota::per_second(2),
        redis.client(),
        options(&prefix, &clock),
    )
    .unwrap();
    let ms = |n: u64| n * 1_000_000;
    assert_eq!(limiter.check_n("k", 1), Ok(Decision::admit(2, 1, ms(500))));
    assert_eq!(limiter.check_n("k", 1), Ok(Decision::admit(2, 0, ms(1000))));
    assert_eq!(
        limiter.check_n("k", 1),
        Ok(Decision::reject(2, 0, ms(500), ms(1000)))
    );
    assert_eq!(
        limiter.check_n("k", 0),
        Ok(Decision::reject(2, 0, ms(500), ms(1000)))
    );
    assert_eq!(
        limiter.check_n("k", 3),
        Err(InsufficientCapacity {
            requested: 3,
            max: 2
        })
    );
    clock.advance(Duration::from_millis(750));
    assert_eq!(limiter.check_n("k", 0), Ok(Decision::admit(2, 1, ms(250))));
}
