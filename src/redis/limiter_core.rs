//! [`LimiterCore`]: what the blocking and async limiters share: building a
//! script call, reading its reply, and the failure policy.

use std::sync::Arc;
use std::time::Duration;

use redis::ScriptInvocation;

use super::algorithm::{MAX_WINDOW, RedisAlgorithm, ScriptSpec};
use super::error::{BackendError, ConfigError};
use super::failure_policy::FailurePolicy;
use super::keys::KeyNames;
use super::options::RedisOptions;
use super::outcome::Outcome;
use crate::clock::{Clock, MonotonicClock};
use crate::decision::Decision;
use crate::error::InsufficientCapacity;
use crate::keyed::KeyedLimiter;
use crate::limiter::RateLimiter;
use crate::quota::Quota;

/// How long a key is kept at least when the time is injected (milliseconds).
const INJECTED_MIN_TTL_MS: u64 = 3_600_000;

/// Refuses windows the scripts would cut short.
fn check_window(quota: &Quota) -> Result<(), ConfigError> {
    if quota.window() > MAX_WINDOW {
        return Err(ConfigError::WindowTooLong {
            window: quota.window(),
            max: MAX_WINDOW,
        });
    }
    Ok(())
}

/// The parts of a Redis limiter that do not depend on the connection.
pub(crate) struct LimiterCore<A: RedisAlgorithm> {
    spec: ScriptSpec,
    names: KeyNames,
    quota: Quota,
    policy: FailurePolicy,
    timeout: Duration,
    injected_clock: Option<Arc<dyn Clock>>,
    /// Present only under [`FailurePolicy::Fallback`].
    fallback: Option<KeyedLimiter<A::Local, String, MonotonicClock>>,
}

impl<A: RedisAlgorithm> LimiterCore<A> {
    pub(crate) fn new(quota: Quota, options: RedisOptions) -> Result<Self, ConfigError> {
        check_window(&quota)?;
        let names = KeyNames::new(options.prefix.as_deref().unwrap_or(A::DEFAULT_PREFIX))?;
        let fallback =
            (options.policy == FailurePolicy::Fallback).then(|| KeyedLimiter::new(quota));
        Ok(LimiterCore {
            spec: A::spec(&quota),
            names,
            quota,
            policy: options.policy,
            timeout: options.timeout,
            injected_clock: options.injected_clock,
            fallback,
        })
    }

    /// A core with the default options (the algorithm's prefix, fail closed).
    ///
    /// # Panics
    /// When the quota's window is longer than [`MAX_WINDOW`] (the default
    /// prefix holds no brace, so that is the only error left).
    pub(crate) fn with_defaults(quota: Quota) -> Self {
        match Self::new(quota, RedisOptions::default()) {
            Ok(core) => core,
            Err(error) => panic!("invalid quota for Redis: {error}"),
        }
    }

    pub(crate) fn quota(&self) -> Quota {
        self.quota
    }

    pub(crate) fn policy(&self) -> FailurePolicy {
        self.policy
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The limit every decision reports.
    pub(crate) fn limit(&self) -> u64 {
        self.spec.limit()
    }

    /// The Redis key names `key` is stored under.
    pub(crate) fn redis_keys(&self, key: &str) -> Vec<Vec<u8>> {
        self.spec
            .suffixes
            .iter()
            .map(|suffix| self.names.name(key, suffix))
            .collect()
    }

    /// The script call for `cost` units of `key`; too large a cost is an error.
    pub(crate) fn invocation(
        &self,
        key: &str,
        cost: u64,
    ) -> Result<ScriptInvocation<'static>, InsufficientCapacity> {
        InsufficientCapacity::check(cost, self.spec.max_cost)?;
        let mut call = self.spec.script.prepare_invoke();
        for name in self.redis_keys(key) {
            call.key(name);
        }
        match &self.injected_clock {
            Some(clock) => call
                .arg(clock.now_nanos() / 1000)
                .arg(cost)
                .arg(INJECTED_MIN_TTL_MS),
            None => call.arg("").arg(cost).arg(0),
        };
        for param in &self.spec.params {
            call.arg(*param);
        }
        Ok(call)
    }

    /// The decision in a script reply `{allowed, remaining, retry µs, reset µs}`.
    pub(crate) fn decision(&self, reply: &[i64]) -> Result<Decision, BackendError> {
        let figures: Option<Vec<u64>> = reply.iter().map(|&x| u64::try_from(x).ok()).collect();
        match figures.as_deref() {
            Some(&[allowed @ (0 | 1), remaining, retry_micros, reset_micros]) => {
                let reset = reset_micros.saturating_mul(1000);
                Ok(if allowed == 1 {
                    Decision::admit(self.limit(), remaining, reset)
                } else {
                    Decision::reject(
                        self.limit(),
                        remaining,
                        retry_micros.saturating_mul(1000),
                        reset,
                    )
                })
            }
            _ => Err(BackendError::InvalidReply(format!("{reply:?}"))),
        }
    }

    /// The failure policy's decision for a call Redis did not answer.
    pub(crate) fn degrade(&self, key: &str, cost: u64, error: BackendError) -> Outcome {
        tracing::warn!(
            target: "tollgate::redis",
            policy = ?self.policy,
            %error,
            "Redis gave no rate-limit decision; the failure policy decides"
        );
        let decision = match (self.policy, &self.fallback) {
            (FailurePolicy::Fallback, Some(local)) => match local.check_n(key, cost) {
                Ok(decision) => decision,
                // The local rule admits less at once than the script (a
                // saturated limit): deny, as waiting would not help.
                Err(_) => Decision::reject(self.limit(), 0, u64::MAX, 0),
            },
            (FailurePolicy::FailOpen, _) => Decision::admit(self.limit(), 0, 0),
            _ => Decision::reject(
                self.limit(),
                0,
                crate::clock::duration_to_nanos(self.timeout),
                0,
            ),
        };
        Outcome::from_policy(decision, error)
    }
}
