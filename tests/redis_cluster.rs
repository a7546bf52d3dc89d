//! The Redis limiters on a real three-primary Redis Cluster: decisions match
//! the in-memory twins over keys on every primary, all Redis keys of one
//! limiter key share a slot, scripts come back after `SCRIPT FLUSH` on every
//! node, and keys expire on every node.
#![cfg(feature = "redis")]

mod redis_support;

use std::collections::HashMap;
use std::thread;
use std::time::{Duration, Instant};

use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis_support::cluster::{TestCluster, keyslot};
use tollgate::redis::{
    AsyncRedisLimiter, FixedWindowScript, RedisAlgorithm, RedisLimitError, RedisLimiter,
    RedisOptions, SlidingWindowCounterScript, SlidingWindowLogScript, TokenBucketScript,
};
use tollgate::{Decision, InsufficientCapacity, KeyedLimiter, ManualClock, Quota, RateLimiter};

/// Requests per quota in one comparison.
const STEPS: usize = 800;

/// Ordinary limiter keys, plus keys whose names need escaping or hold
/// braces, so the hash tags of all kinds are routed.
fn limiter_keys() -> Vec<String> {
    (0..48)
        .map(|i| format!("user-{i}"))
        .chain(["", "}x", "a}b", "{y}", "\0z"].map(String::from))
        .collect()
}

/// Whether Redis hashes `name`'s keys on `key` itself (no brace, no escape).
fn is_plain(key: &str) -> bool {
    !key.is_empty() && !key.contains(['{', '}', '\0'])
}

/// The quotas compared; every token interval and window is a whole number of
/// microseconds.
fn quotas() -> Vec<Quota> {
    vec![
        Quota::per_second(5),
        Quota::per_second(10).with_burst(4),
        Quota::new(3, Duration::from_millis(9)).unwrap(),
    ]
}

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
    key: String,
    cost: u64,
}

/// Drives one in-memory limiter and checks a remote one against it.
struct Comparison<A: RedisAlgorithm> {
    test: String,
    quota: Quota,
    clock: ManualClock,
    memory: KeyedLimiter<A::Local, String, ManualClock>,
    steps: Steps,
    keys: Vec<String>,
    /// The last request, when it was rejected: it may be retried at (or
    /// 1 µs before) its retry time.
    rejected: Option<(Request, Decision)>,
    issued: usize,
    admitted: usize,
    denied: usize,
    impossible: usize,
}

impl<A: RedisAlgorithm> Comparison<A> {
    fn new(test: &str, quota: Quota, seed: u64) -> Self {
        let clock = ManualClock::new();
        clock.set(Duration::from_secs(1_000));
        Comparison {
            test: test.to_owned(),
            quota,
            memory: KeyedLimiter::with_clock(quota, clock.clone()),
            clock,
            steps: Steps(seed),
            keys: limiter_keys(),
            rejected: None,
            issued: 0,
            admitted: 0,
            denied: 0,
            impossible: 0,
        }
    }

    fn options(&self, prefix: &str) -> RedisOptions {
        RedisOptions::new()
            .prefix(prefix)
            .injected_clock(self.clock.clone())
            .timeout(Duration::from_secs(5))
    }

    /// Peeks, unit, bulk and impossible costs, bursts at one instant, gaps
    /// within and across windows, and retries at the reported retry time.
    fn next_request(&mut self) -> Request {
        self.issued += 1;
        if let Some((request, decision)) = self.rejected.take()
            && self.steps.below(2) == 0
        {
            let early = self.steps.below(2);
            return Request {
                advance_micros: (decision.retry_after_nanos() / 1000).saturating_sub(early),
                ..request
            };
        }
        let window = self.quota.window_nanos() / 1000;
        let spacing = window / self.quota.limit().max(1);
        let largest = self.quota.limit().max(self.quota.burst());
        let steps = &mut self.steps;
        let advance_micros = match steps.below(10) {
            0..=3 => 0,
            4..=7 => steps.below(spacing + 1),
            8 => steps.below(window + 1),
            _ => steps.below(window * 3 + 1),
        };
        let cost = match steps.below(20) {
            0 | 1 => 0,
            2..=10 => 1,
            11..=18 => 1 + steps.below(largest),
            _ => largest + 1 + steps.below(3),
        };
        // Four keys at a time, so that they fill up and get rejected; the
        // four move on every 40 requests, through every key.
        let index = (self.issued / 40 * 4 + steps.below(4) as usize) % self.keys.len();
        let key = self.keys[index].clone();
        Request {
            advance_micros,
            key,
            cost,
        }
    }

    /// Advances the clock for `request` and answers it in memory, as Redis
    /// would report it (figures rounded up to whole microseconds).
    fn expect(&self, request: &Request) -> Result<Decision, InsufficientCapacity> {
        self.clock
            .advance(Duration::from_micros(request.advance_micros));
        self.memory
            .check_n(&request.key, request.cost)
            .map(in_micros)
    }

    fn check(
        &mut self,
        step: &str,
        request: Request,
        expected: Result<Decision, InsufficientCapacity>,
        got: Result<Decision, RedisLimitError>,
    ) {
        let got = match got {
            Ok(decision) => Ok(decision),
            Err(RedisLimitError::InsufficientCapacity(error)) => Err(error),
            Err(error) => panic!("{}: Redis failed at {step}: {error}", self.test),
        };
        assert_eq!(
            got, expected,
            "{}: quota {}, {step}, {request:?}",
            self.test, self.quota
        );
        match got {
            Ok(decision) if decision.allowed() => self.admitted += 1,
            Ok(decision) => {
                self.denied += 1;
                self.rejected = Some((request, decision));
            }
            Err(_) => self.impossible += 1,
        }
    }

    /// A request of one unit for every key, after every key is fresh again.
    fn touch_all(&self) -> Vec<Request> {
        let fresh_after = self.quota.window_nanos() / 1000 * 3;
        self.keys
            .iter()
            .enumerate()
            .map(|(index, key)| Request {
                advance_micros: if index == 0 { fresh_after } else { 0 },
                key: key.clone(),
                cost: 1,
            })
            .collect()
    }

    fn assert_covered(&self) {
        assert!(
            self.admitted > 0 && self.denied > 0 && self.impossible > 0,
            "{}: quota {}: admitted {}, rejected {}, impossible {}",
            self.test,
            self.quota,
            self.admitted,
            self.denied,
            self.impossible
        );
    }
}

/// `nanos` rounded up to a whole microsecond.
fn round_up_micros(nanos: u64) -> u64 {
    nanos.div_ceil(1000).saturating_mul(1000)
}

fn in_micros(decision: Decision) -> Decision {
    let reset = round_up_micros(decision.reset_after_nanos());
    if decision.allowed() {
        Decision::admit(decision.limit(), decision.remaining(), reset)
    } else {
        Decision::reject(
            decision.limit(),
            decision.remaining(),
            round_up_micros(decision.retry_after_nanos()),
            reset,
        )
    }
}

/// After `SCRIPT FLUSH` on every node no node has a script cached.
fn flush_everywhere(cluster: &TestCluster, test: &str) {
    cluster.flush_scripts();
    assert!(
        cluster.cached_scripts().iter().all(|&n| n == 0),
        "{test}: SCRIPT FLUSH emptied every node's cache"
    );
}

/// The first decision after a flush loaded the script on every primary.
fn assert_reloaded_everywhere(cluster: &TestCluster, test: &str) {
    let cached = cluster.cached_scripts();
    assert!(
        cached.iter().all(|&n| n >= 1),
        "{test}: the script is cached again on every primary, got {cached:?}"
    );
}

/// Every Redis key under `prefix` belongs to one limiter key; all of a
/// limiter key's names are on one node and one slot (the slot of the key
/// itself when it needs no escaping); every key in `touched` has all its
/// names stored; and every node holds some.
fn assert_one_slot_per_key(
    cluster: &TestCluster,
    test: &str,
    prefix: &str,
    names_of: impl Fn(&str) -> Vec<Vec<u8>>,
    touched: &[String],
) {
    let owner: HashMap<Vec<u8>, String> = limiter_keys()
        .into_iter()
        .flat_map(|key| {
            names_of(&key)
                .into_iter()
                .map(move |name| (name, key.clone()))
        })
        .collect();
    let mut placed: HashMap<String, Vec<(usize, u16, Vec<u8>)>> = HashMap::new();
    let mut admin = cluster.connections().swap_remove(0);
    let per_node = cluster.keys_under(prefix);
    for (node, names) in per_node.iter().enumerate() {
        assert!(
            !names.is_empty(),
            "{test}: node {node} of {:?} holds none of the keys",
            cluster.urls()
        );
        for name in names {
            let key = owner.get(name).unwrap_or_else(|| {
                panic!(
                    "{test}: {:?} is no limiter key's name",
                    String::from_utf8_lossy(name)
                )
            });
            let slot = keyslot(&mut admin, name);
            placed
                .entry(key.clone())
                .or_default()
                .push((node, slot, name.clone()));
        }
    }
    for (key, names) in &placed {
        let (node, slot, _) = names[0];
        assert!(
            names.iter().all(|&(n, s, _)| n == node && s == slot),
            "{test}: the names of {key:?} are spread: {names:?}"
        );
        assert_eq!(
            names.len(),
            names_of(key).len(),
            "{test}: all of {key:?}'s names are stored together: {names:?}"
        );
        if is_plain(key) {
            assert_eq!(
                slot,
                keyslot(&mut admin, key.as_bytes()),
                "{test}: {key:?} is stored on its own slot"
            );
        }
    }
    for key in touched {
        assert!(
            placed.contains_key(key),
            "{test}: {key:?} was admitted but nothing is stored for it"
        );
    }
}

fn compare_blocking<A: RedisAlgorithm>(test: &str) {
    let Some(cluster) = redis_support::cluster::cluster(test) else {
        return;
    };
    for (index, quota) in quotas().into_iter().enumerate() {
        let mut run = Comparison::<A>::new(test, quota, index as u64 + 1);
        let prefix = redis_support::unique_prefix(test);
        let remote: RedisLimiter<A, ClusterClient> =
            RedisLimiter::with_options(quota, cluster.client(), run.options(&prefix)).unwrap();
        for step in 0..STEPS {
            if step == STEPS / 2 {
                flush_everywhere(&cluster, test);
            }
            let request = run.next_request();
            let expected = run.expect(&request);
            let got = remote.try_check_n(&request.key, request.cost);
            run.check(&format!("step {step}"), request, expected, got);
            if step == STEPS / 2 {
                assert_reloaded_everywhere(&cluster, test);
            }
        }
        run.assert_covered();
        let touched: Vec<String> = run.touch_all().into_iter().map(|r| r.key.clone()).collect();
        for request in run.touch_all() {
            let expected = run.expect(&request);
            assert!(
                expected.is_ok_and(|d| d.allowed()),
                "{test}: fresh keys admit"
            );
            let got = remote.try_check_n(&request.key, request.cost);
            run.check("the final pass", request, expected, got);
        }
        assert_one_slot_per_key(&cluster, test, &prefix, |k| remote.redis_keys(k), &touched);
    }
}

#[test]
fn token_bucket_on_a_cluster_matches_memory() {
    compare_blocking::<TokenBucketScript>("token_bucket_on_a_cluster_matches_memory");
}

#[test]
fn fixed_window_on_a_cluster_matches_memory() {
    compare_blocking::<FixedWindowScript>("fixed_window_on_a_cluster_matches_memory");
}

#[test]
fn sliding_window_log_on_a_cluster_matches_memory() {
    compare_blocking::<SlidingWindowLogScript>("sliding_window_log_on_a_cluster_matches_memory");
}

#[test]
fn sliding_window_counter_on_a_cluster_matches_memory() {
    compare_blocking::<SlidingWindowCounterScript>(
        "sliding_window_counter_on_a_cluster_matches_memory",
    );
}

async fn compare_async<A: RedisAlgorithm>(
    cluster: &TestCluster,
    connection: &ClusterConnection,
    test: &str,
) {
    for (index, quota) in quotas().into_iter().enumerate() {
        let mut run = Comparison::<A>::new(test, quota, index as u64 + 100);
        let prefix = redis_support::unique_prefix(test);
        let remote: AsyncRedisLimiter<A, ClusterConnection> =
            AsyncRedisLimiter::with_options(quota, connection.clone(), run.options(&prefix))
                .unwrap();
        for step in 0..STEPS {
            if step == STEPS / 2 {
                flush_everywhere(cluster, test);
            }
            let request = run.next_request();
            let expected = run.expect(&request);
            let got = remote.try_check_n(&request.key, request.cost).await;
            run.check(&format!("step {step}"), request, expected, got);
            if step == STEPS / 2 {
                assert_reloaded_everywhere(cluster, test);
            }
        }
        run.assert_covered();
        let touched: Vec<String> = run.touch_all().into_iter().map(|r| r.key.clone()).collect();
        for request in run.touch_all() {
            let expected = run.expect(&request);
            assert!(
                expected.is_ok_and(|d| d.allowed()),
                "{test}: fresh keys admit"
            );
            let got = remote.try_check_n(&request.key, request.cost).await;
            run.check("the final pass", request, expected, got);
        }
        assert_one_slot_per_key(cluster, test, &prefix, |k| remote.redis_keys(k), &touched);
    }
}

/// The async limiters on one Cluster connection: the token bucket and the
/// two-key log, the others for good measure.
#[tokio::test]
async fn async_limiters_on_a_cluster_match_memory() {
    let test = "async_limiters_on_a_cluster_match_memory";
    let Some(cluster) = redis_support::cluster::cluster(test) else {
        return;
    };
    let connection = cluster
        .client()
        .get_async_connection()
        .await
        .expect("an async Cluster connection");
    compare_async::<TokenBucketScript>(&cluster, &connection, test).await;
    compare_async::<SlidingWindowLogScript>(&cluster, &connection, test).await;
    compare_async::<FixedWindowScript>(&cluster, &connection, test).await;
    compare_async::<SlidingWindowCounterScript>(&cluster, &connection, test).await;
}

/// Spends units on every key with the server's clock, then checks every
/// stored key expires, and none is left on any node once the latest reset
/// time has passed.
fn keys_expire<A: RedisAlgorithm>(cluster: &TestCluster, test: &str) -> (String, Instant) {
    let prefix = redis_support::unique_prefix(test);
    let options = RedisOptions::new()
        .prefix(&prefix)
        .timeout(Duration::from_secs(5));
    let quota = Quota::new(3, Duration::from_millis(300)).unwrap();
    let limiter: RedisLimiter<A, ClusterClient> =
        RedisLimiter::with_options(quota, cluster.client(), options).unwrap();
    let mut fresh_by = Instant::now();
    for (index, key) in limiter_keys().iter().enumerate() {
        let cost = 1 + index as u64 % 3;
        let decision = limiter.try_check_n(key, cost).expect("Redis decides");
        assert!(decision.allowed(), "{test}: a new key admits {cost}");
        // The key's deadline is the server's time at the call plus the reset
        // time rounded up to a millisecond: no later than now plus that.
        let reset = Duration::from_nanos(decision.reset_after_nanos())
            .saturating_add(Duration::from_millis(1));
        fresh_by = fresh_by.max(Instant::now() + reset);
    }
    let mut connections = cluster.connections();
    for (node, names) in cluster.keys_under(&prefix).iter().enumerate() {
        assert!(!names.is_empty(), "{test}: node {node} holds some keys");
        for name in names {
            let ttl: i64 = redis::cmd("PTTL")
                .arg(name)
                .query(&mut connections[node])
                .unwrap();
            // -2: the key already expired between the listing and this
            // query (its TTL is 300 ms, and a loaded machine can take that
            // long to get here); -1 would be a key that never expires.
            assert!(
                ttl > 0 || ttl == -2,
                "{test}: {:?} expires (PTTL {ttl})",
                String::from_utf8_lossy(name)
            );
        }
    }
    (prefix, fresh_by)
}

#[test]
fn keys_expire_on_every_node() {
    let test = "keys_expire_on_every_node";
    let Some(cluster) = redis_support::cluster::cluster(test) else {
        return;
    };
    let spent = [
        keys_expire::<TokenBucketScript>(&cluster, test),
        keys_expire::<FixedWindowScript>(&cluster, test),
        keys_expire::<SlidingWindowLogScript>(&cluster, test),
        keys_expire::<SlidingWindowCounterScript>(&cluster, test),
    ];
    let fresh_by = spent.iter().map(|(_, at)| *at).max().unwrap();
    // A little slack for the servers' clocks ticking apart from ours.
    thread::sleep(fresh_by.saturating_duration_since(Instant::now()) + Duration::from_millis(20));
    for (prefix, _) in &spent {
        let left: Vec<Vec<String>> = cluster
            .keys_under(prefix)
            .iter()
            .map(|names| {
                names
                    .iter()
                    .map(|name| String::from_utf8_lossy(name).into_owned())
                    .collect()
            })
            .collect();
        assert!(
            left.iter().all(Vec::is_empty),
            "{test}: keys left on the nodes after the reset time: {left:?}"
        );
    }
}
