//! Script loading and key lifetimes on a real Redis: scripts come back after
//! `SCRIPT FLUSH`, and no key outlives the time its state takes to become
//! fresh again.
#![cfg(feature = "redis")]

mod redis_support;

use std::thread;
use std::time::Duration;

use tollgate::redis::{
    ConfigError, FixedWindowScript, MAX_TIMEOUT, MAX_WINDOW, RedisAlgorithm, RedisLimiter,
    RedisOptions, SlidingWindowCounterScript, SlidingWindowLogScript, TokenBucketScript,
};
use tollgate::{ManualClock, Quota, RateLimiter, SlidingWindowLog};

fn limiter<A: RedisAlgorithm>(
    redis: &redis_support::TestRedis,
    quota: Quota,
    prefix: &str,
) -> RedisLimiter<A> {
    let options = RedisOptions::new()
        .prefix(prefix)
        .timeout(Duration::from_secs(5));
    RedisLimiter::with_options(quota, redis.client(), options).unwrap()
}

fn cached_scripts(connection: &mut redis::Connection) -> u64 {
    let info: String = redis::cmd("INFO").arg("memory").query(connection).unwrap();
    info.lines()
        .find_map(|line| line.strip_prefix("number_of_cached_scripts:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("INFO memory reports number_of_cached_scripts")
}

/// Two admissions, a flush, then the third request: Redis still answers,
/// the state survived, and the script is cached again.
fn survives_script_flush<A: RedisAlgorithm>(test: &str) {
    let Some(redis) = redis_support::redis(test) else {
        return;
    };
    let mut admin = redis.connection();
    let prefix = redis_support::unique_prefix(test);
    let limiter = limiter::<A>(&redis, Quota::per_hour(2), &prefix);
    assert!(limiter.try_check_n("k", 1).unwrap().allowed());
    let () = redis::cmd("SCRIPT").arg("FLUSH").query(&mut admin).unwrap();
    if redis.is_private() {
        assert_eq!(
            cached_scripts(&mut admin),
            0,
            "{test}: the flush emptied the cache"
        );
    }
    let second = limiter
        .try_check_n("k", 1)
        .expect("the script is reloaded after NOSCRIPT");
    assert!(second.allowed(), "{test}: the second unit passes");
    assert_eq!(
        second.remaining(),
        0,
        "{test}: the state survived the flush"
    );
    assert!(
        !limiter.try_check_n("k", 1).unwrap().allowed(),
        "{test}: the quota holds"
    );
    assert!(
        cached_scripts(&mut admin) >= 1,
        "{test}: the script is cached again"
    );
}

#[test]
fn token_bucket_survives_script_flush() {
    survives_script_flush::<TokenBucketScript>("token_bucket_survives_script_flush");
}

#[test]
fn fixed_window_survives_script_flush() {
    survives_script_flush::<FixedWindowScript>("fixed_window_survives_script_flush");
}

#[test]
fn sliding_window_log_survives_script_flush() {
    survives_script_flush::<SlidingWindowLogScript>("sliding_window_log_survives_script_flush");
}

#[test]
fn sliding_window_counter_survives_script_flush() {
    survives_script_flush::<SlidingWindowCounterScript>(
        "sliding_window_counter_survives_script_flush",
    );
}

#[tokio::test]
async fn async_limiter_survives_script_flush() {
    let test = "async_limiter_survives_script_flush";
    let Some(redis) = redis_support::redis(test) else {
        return;
    };
    let mut admin = redis.connection();
    let connection = redis
        .client()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let prefix = redis_support::unique_prefix(test);
    let options = RedisOptions::new()
        .prefix(&prefix)
        .timeout(Duration::from_secs(5));
    let limiter: tollgate::redis::AsyncRedisLimiter<SlidingWindowLogScript, _> =
        tollgate::redis::AsyncRedisLimiter::with_options(Quota::per_hour(2), connection, options)
            .unwrap();
    assert!(limiter.try_check_n("k", 1).await.unwrap().allowed());
    let () = redis::cmd("SCRIPT").arg("FLUSH").query(&mut admin).unwrap();
    let second = limiter
        .try_check_n("k", 1)
        .await
        .expect("reloaded after NOSCRIPT");
    assert_eq!((second.allowed(), second.remaining()), (true, 0));
    assert!(!limiter.try_check_n("k", 1).await.unwrap().allowed());
}

/// Milliseconds `name` has left to live; panics when it has no expiry.
fn pttl(connection: &mut redis::Connection, name: &[u8]) -> i64 {
    let ttl: i64 = redis::cmd("PTTL").arg(name).query(connection).unwrap();
    assert!(
        ttl > 0,
        "key {:?} must exist and expire (PTTL {ttl})",
        String::from_utf8_lossy(name)
    );
    ttl
}

/// Spends units on a few keys with the server's clock, checks every key
/// expires no later than the reset time each decision reported, then waits
/// that long and finds nothing left.
fn keys_expire_at_reset<A: RedisAlgorithm>(test: &str) {
    let Some(redis) = redis_support::redis(test) else {
        return;
    };
    let mut admin = redis.connection();
    let prefix = redis_support::unique_prefix(test);
    let limiter = limiter::<A>(
        &redis,
        Quota::new(3, Duration::from_millis(300)).unwrap(),
        &prefix,
    );

    // A peek on a new key stores nothing.
    assert!(limiter.try_check_n("peeked", 0).unwrap().allowed());
    assert!(
        redis_support::keys_under(&mut admin, &prefix).is_empty(),
        "{test}: a peek stored a key"
    );

    let mut longest_reset = Duration::ZERO;
    for (key, cost) in [("x", 1), ("x", 2), ("x", 1), ("y", 3), ("z", 1)] {
        let decision = limiter.try_check_n(key, cost).unwrap();
        if !decision.allowed() {
            continue;
        }
        let reset_ms = i64::try_from(decision.reset_after().as_millis()).unwrap() + 1;
        for name in limiter.redis_keys(key) {
            let ttl = pttl(&mut admin, &name);
            assert!(
                ttl <= reset_ms,
                "{test}: {key} lives {ttl} ms, reset is {reset_ms} ms"
            );
        }
        longest_reset = longest_reset.max(decision.reset_after());
    }
    assert!(
        longest_reset > Duration::ZERO,
        "{test}: something was admitted"
    );

    // A denied call changes nothing, so it does not extend a lifetime. (A
    // fixed window may roll over between calls; then the second try is in a
    // full window.)
    let name = limiter.redis_keys("x").remove(0);
    let mut denials = 0;
    for _ in 0..2 {
        let before = pttl(&mut admin, &name);
        let decision = limiter.try_check_n("x", 3).unwrap();
        if decision.allowed() {
            longest_reset = longest_reset.max(decision.reset_after());
            continue;
        }
        denials += 1;
        assert!(
            pttl(&mut admin, &name) <= before,
            "{test}: a denial extended the key's life"
        );
        break;
    }
    assert_eq!(denials, 1, "{test}: x is spent");

    thread::sleep(longest_reset + Duration::from_millis(50));
    let left = redis_support::keys_under(&mut admin, &prefix);
    assert!(
        left.is_empty(),
        "{test}: keys left after the reset time: {left:?}"
    );
    // And the limiter starts fresh.
    assert_eq!(limiter.try_check_n("x", 0).unwrap().remaining(), 3);
}

#[test]
fn token_bucket_keys_expire_at_reset() {
    keys_expire_at_reset::<TokenBucketScript>("token_bucket_keys_expire_at_reset");
}

#[test]
fn fixed_window_keys_expire_at_reset() {
    keys_expire_at_reset::<FixedWindowScript>("fixed_window_keys_expire_at_reset");
}

#[test]
fn sliding_window_log_keys_expire_at_reset() {
    keys_expire_at_reset::<SlidingWindowLogScript>("sliding_window_log_keys_expire_at_reset");
}

#[test]
fn sliding_window_counter_keys_expire_at_reset() {
    keys_expire_at_reset::<SlidingWindowCounterScript>(
        "sliding_window_counter_keys_expire_at_reset",
    );
}

#[test]
fn keys_carry_the_prefix_and_a_hash_tag() {
    let client = redis::Client::open("redis://127.0.0.1:1").unwrap();
    let options = RedisOptions::new().prefix("app:");
    let log: RedisLimiter<SlidingWindowLogScript> =
        RedisLimiter::with_options(Quota::per_second(1), client.clone(), options).unwrap();
    assert_eq!(
        log.redis_keys("alice"),
        vec![b"app:{alice}:log".to_vec(), b"app:{alice}:sum".to_vec()]
    );
    let default: RedisLimiter<TokenBucketScript> =
        RedisLimiter::new(Quota::per_second(1), client.clone());
    assert_eq!(
        default.redis_keys("alice"),
        vec![b"tollgate:tb:{alice}".to_vec()]
    );
    let braces = RedisLimiter::<FixedWindowScript>::with_options(
        Quota::per_second(1),
        client,
        RedisOptions::new().prefix("a{b}:"),
    );
    assert!(matches!(braces, Err(ConfigError::BraceInPrefix { .. })));
}

#[test]
fn impossible_costs_are_errors_before_any_round_trip() {
    // Nothing listens on port 1: an error here could only come from the cost check.
    let client = redis::Client::open("redis://127.0.0.1:1").unwrap();
    let limiter: RedisLimiter<FixedWindowScript> = RedisLimiter::new(Quota::per_second(5), client);
    let error = limiter.check_n("k", 6).unwrap_err();
    assert_eq!((error.requested, error.max), (6, 5));
}

/// Longer windows than the scripts' figures hold are refused, not cut short
/// (a cut window would let a key spend again early); the longest is taken.
#[test]
fn windows_longer_than_the_scripts_take_are_errors() {
    fn check<A: RedisAlgorithm>() {
        let client = || redis::Client::open("redis://127.0.0.1:1").unwrap();
        let too_long = Quota::new(1, MAX_WINDOW + Duration::from_micros(1)).unwrap();
        let refused = RedisLimiter::<A>::with_options(too_long, client(), RedisOptions::new());
        assert_eq!(
            refused.err(),
            Some(ConfigError::WindowTooLong {
                window: too_long.window(),
                max: MAX_WINDOW,
            })
        );
        let longest = Quota::new(1, MAX_WINDOW).unwrap();
        assert!(RedisLimiter::<A>::with_options(longest, client(), RedisOptions::new()).is_ok());
        let panicked = std::panic::catch_unwind(|| RedisLimiter::<A>::new(too_long, client()));
        assert!(panicked.is_err(), "`new` documents a panic for this quota");
    }
    check::<TokenBucketScript>();
    check::<FixedWindowScript>();
    check::<SlidingWindowLogScript>();
    check::<SlidingWindowCounterScript>();
}

/// A timeout of `Duration::MAX` means "as long as it takes": it is lowered to
/// `MAX_TIMEOUT`, and decisions are made (its deadline once overflowed the
/// clock and panicked).
#[test]
fn an_unbounded_timeout_still_decides() {
    let Some(redis) = redis_support::redis("an_unbounded_timeout_still_decides") else {
        return;
    };
    let prefix = redis_support::unique_prefix("an_unbounded_timeout_still_decides");
    let options = RedisOptions::new().prefix(prefix).timeout(Duration::MAX);
    let limiter: RedisLimiter<TokenBucketScript> =
        RedisLimiter::with_options(Quota::per_hour(2), redis.client(), options).unwrap();
    let remaining: Vec<u64> = (0..2)
        .map(|_| limiter.try_check_n("k", 1).unwrap().remaining())
        .collect();
    assert_eq!(remaining, [1, 0]);
    assert!(!limiter.try_check_n("k", 1).unwrap().allowed());
    assert!(format!("{limiter:?}").contains(&format!("{MAX_TIMEOUT:?}")));
}

/// Limiters with different limits on one prefix: the lower one reads a
/// count above its limit as "nothing left", not as a reply it cannot read
/// (which handed the decision to the failure policy: `FailOpen` admitted).
#[test]
fn a_count_above_the_limit_is_a_refusal_not_a_bad_reply() {
    fn check<A: RedisAlgorithm>(redis: &redis_support::TestRedis, test: &str) {
        let prefix = redis_support::unique_prefix(test);
        let wide = limiter::<A>(redis, Quota::per_minute(10), &prefix);
        let narrow = limiter::<A>(redis, Quota::per_minute(5), &prefix);
        assert!(wide.try_check_n("k", 8).unwrap().allowed());
        for cost in [1, 0] {
            let decision = narrow.try_check_n("k", cost).unwrap();
            assert_eq!(
                (decision.allowed(), decision.remaining()),
                (false, 0),
                "{test}: cost {cost}"
            );
        }
    }
    let test = "a_count_above_the_limit_is_a_refusal_not_a_bad_reply";
    let Some(redis) = redis_support::redis(test) else {
        return;
    };
    check::<FixedWindowScript>(&redis, test);
    check::<SlidingWindowLogScript>(&redis, test);
}

/// A refusal on a long log walks it oldest first, a chunk of entries at a
/// time, and stops where enough would have expired: the retry hint must be
/// the in-memory limiter's, wherever that entry falls among the chunks.
#[test]
fn a_log_refusal_finds_its_retry_across_chunks() {
    let test = "a_log_refusal_finds_its_retry_across_chunks";
    let Some(redis) = redis_support::redis(test) else {
        return;
    };
    let clock = ManualClock::new();
    clock.set(Duration::from_secs(1_000));
    let quota = Quota::new(300, Duration::from_secs(10)).unwrap();
    let options = RedisOptions::new()
        .prefix(redis_support::unique_prefix(test))
        .injected_clock(clock.clone())
        .timeout(Duration::from_secs(5));
    let remote: RedisLimiter<SlidingWindowLogScript> =
        RedisLimiter::with_options(quota, redis.client(), options).unwrap();
    let local: SlidingWindowLog<&str, ManualClock> =
        SlidingWindowLog::with_clock(quota, clock.clone());
    // 300 entries, one unit each, 1 ms apart.
    for _ in 0..300 {
        assert!(remote.try_check_n("k", 1).unwrap().allowed());
        assert!(local.allow(&"k"));
        clock.advance(Duration::from_millis(1));
    }
    // Room for each cost opens after that many entries expire: the 1st, the
    // 64th (end of the first chunk), the 65th, and on across chunks.
    for cost in [1, 64, 65, 130, 200, 300] {
        let remote = remote.try_check_n("k", cost).unwrap();
        let local = local.check_n(&"k", cost).unwrap();
        assert!(!remote.allowed() && !local.allowed(), "cost {cost}");
        assert_eq!(remote.retry_after(), local.retry_after(), "cost {cost}");
    }
}

/// The log's keys live until its newest entry stops counting, by Redis's
/// own clock: an entry stored ahead of that clock (written before it
/// stepped back) keeps the keys that much longer.
#[test]
fn log_keys_outlive_an_entry_from_ahead_of_the_clock() {
    let test = "log_keys_outlive_an_entry_from_ahead_of_the_clock";
    let Some(redis) = redis_support::redis(test) else {
        return;
    };
    let mut admin = redis.connection();
    let window = Duration::from_secs(2);
    let limiter = limiter::<SlidingWindowLogScript>(
        &redis,
        Quota::new(5, window).unwrap(),
        &redis_support::unique_prefix(test),
    );
    let names = limiter.redis_keys("k");
    let (log, sum) = (&names[0], &names[1]);
    let (secs, micros): (u64, u64) = redis::cmd("TIME").query(&mut admin).unwrap();
    // One unit 1.5 s ahead of the server's clock, as if the clock stepped
    // back after it was admitted.
    let ahead = secs * 1_000_000 + micros + 1_500_000;
    let _: () = redis::pipe()
        .cmd("ZADD")
        .arg(log)
        .arg(ahead)
        .arg(format!("{ahead}:1"))
        .ignore()
        .cmd("SET")
        .arg(sum)
        .arg(1)
        .ignore()
        .query(&mut admin)
        .unwrap();
    assert!(limiter.try_check_n("k", 1).unwrap().allowed());
    // The newest entry stops counting 2 s after `ahead`: about 3.5 s from now.
    for name in [log, sum] {
        let ttl = pttl(&mut admin, name);
        assert!(ttl > 3_000, "lives {ttl} ms");
    }
}
