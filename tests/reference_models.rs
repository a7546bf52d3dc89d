//! Each algorithm driven side by side with a plain model of its documented
//! semantics by thousands of random `(advance, key, cost)` steps; every
//! decision and every reported figure must agree.
//!
//! The models use exact `u128` arithmetic and are written from the module
//! docs, not from the limiters' code.

mod common;

use std::time::Duration;

use common::{Figures, SplitMix64};
use tollgate::{
    Algorithm, Clock, FixedWindowRule, KeyedLimiter, ManualClock, Quota, RateLimiter,
    SlidingWindowCounterRule, SlidingWindowLogRule, TokenBucketRule,
};

const KEYS: u64 = 3;
const STEPS: usize = 20_000;

/// A single-threaded model of one algorithm over several keys.
trait Model {
    fn new(quota: &Quota) -> Self;
    /// The most units one call may ask for.
    fn max_cost(&self) -> u64;
    /// A length that window or refill edges are multiples of.
    fn edge(&self) -> u64;
    /// The answer for `cost` units of `key` at `now`, applied to the model.
    fn check(&mut self, key: u64, now: u64, cost: u64) -> Figures;
}

// ---------------------------------------------------------------- token bucket

/// GCRA as documented: `T = max(⌈window / limit⌉, 1)`,
/// `τ = min(burst·T, max(2^62, T))`, capacity `⌊τ / T⌋`; per key the time
/// `TAT` at which the bucket is full again.
struct TokenBucketModel {
    interval: u128,
    tolerance: u128,
    capacity: u64,
    tat: Vec<u128>,
}

impl Model for TokenBucketModel {
    fn new(quota: &Quota) -> Self {
        let window = u128::from(quota.window_nanos());
        let limit = u128::from(quota.limit());
        let interval = window.div_ceil(limit).max(1);
        let tolerance = (u128::from(quota.burst()) * interval).min((1u128 << 62).max(interval));
        TokenBucketModel {
            interval,
            tolerance,
            capacity: u64::try_from(tolerance / interval).unwrap(),
            tat: vec![0; KEYS as usize],
        }
    }

    fn max_cost(&self) -> u64 {
        self.capacity
    }

    fn edge(&self) -> u64 {
        u64::try_from(self.interval).unwrap()
    }

    fn check(&mut self, key: u64, now: u64, cost: u64) -> Figures {
        let (t, tau, cap) = (self.interval, self.tolerance, self.capacity);
        let now = u128::from(now);
        let tat = &mut self.tat[key as usize];
        // How far the bucket is from full, in nanoseconds of refill.
        let debt = tat.saturating_sub(now);
        let tokens = u64::try_from((tau - debt) / t).unwrap();
        let need = debt + u128::from(cost.max(1)) * t;
        let fig = |x: u128| u64::try_from(x).unwrap();
        if need > tau {
            // It passes once enough debt has been repaid: after need - τ.
            return Figures::reject(cap, tokens, fig(need - tau), fig(debt));
        }
        if cost == 0 {
            return Figures::admit(cap, tokens, fig(debt));
        }
        *tat = now + need;
        Figures::admit(cap, fig((tau - need) / t), fig(need))
    }
}

// ---------------------------------------------------------------- fixed window

/// At most `min(limit, 2^32 - 2)` units in each window `[kW, (k+1)W)`.
struct FixedWindowModel {
    limit: u64,
    window: u64,
    /// Per key: the window number of the last admission and units used in it.
    keys: Vec<(u64, u64)>,
}

impl Model for FixedWindowModel {
    fn new(quota: &Quota) -> Self {
        FixedWindowModel {
            limit: quota.limit().min(u64::from(u32::MAX) - 1),
            window: quota.window_nanos(),
            keys: vec![(0, 0); KEYS as usize],
        }
    }

    fn max_cost(&self) -> u64 {
        self.limit
    }

    fn edge(&self) -> u64 {
        self.window
    }

    fn check(&mut self, key: u64, now: u64, cost: u64) -> Figures {
        let (limit, window) = (self.limit, self.window);
        let index = now / window;
        let (stored, used) = self.keys[key as usize];
        let used = if stored == index { used } else { 0 };
        let until_end =
            u64::try_from(u128::from(index + 1) * u128::from(window) - u128::from(now)).unwrap();
        // Fresh (nothing to reset) when the window holds nothing.
        let reset = if used == 0 { 0 } else { until_end };
        if used + cost.max(1) > limit {
            // The next window starts from zero, and any allowed cost fits.
            return Figures::reject(limit, limit - used, until_end, reset);
        }
        if cost == 0 {
            return Figures::admit(limit, limit - used, reset);
        }
        self.keys[key as usize] = (index, used + cost);
        Figures::admit(limit, limit - used - cost, until_end)
    }
}

// ------------------------------------------------------- sliding window counter

/// Per key: window number, units of the window before it, units of it.
#[derive(Clone, Copy)]
struct CounterState {
    index: u64,
    prev: u64,
    cur: u64,
}

/// Passes `n` at offset `e` into a window when
/// `prev·(W - e) + (cur + n)·W ≤ limit·W`, `limit ≤ 2^24 - 2`.
struct CounterModel {
    limit: u64,
    window: u64,
    keys: Vec<CounterState>,
}

impl CounterModel {
    /// `(prev, cur, elapsed)` that apply at `at` for a state last written earlier.
    fn counts_at(&self, s: CounterState, at: u64) -> (u64, u64, u64) {
        let index = at / self.window;
        let elapsed = at % self.window;
        if index == s.index {
            (s.prev, s.cur, elapsed)
        } else if index == s.index + 1 {
            (s.cur, 0, elapsed)
        } else {
            (0, 0, elapsed)
        }
    }

    fn weighted_prev(&self, prev: u64, elapsed: u64) -> u128 {
        u128::from(prev) * u128::from(self.window - elapsed)
    }

    fn fits(&self, s: CounterState, at: u64, n: u64) -> bool {
        let (prev, cur, e) = self.counts_at(s, at);
        let w = u128::from(self.window);
        self.weighted_prev(prev, e) + u128::from(cur + n) * w <= u128::from(self.limit) * w
    }

    /// The largest `m` with `prev·(W - e) + (cur + m)·W ≤ limit·W` (0 if none).
    fn remaining(&self, prev: u64, cur: u64, e: u64) -> u64 {
        let w = u128::from(self.window);
        let room = (u128::from(self.limit) * w).saturating_sub(self.weighted_prev(prev, e)) / w;
        u64::try_from(room.saturating_sub(u128::from(cur))).unwrap()
    }

    /// Until both counts that apply have decayed: `cur` weighs until the end of
    /// the next window, `prev` until the end of this one.
    fn reset(&self, prev: u64, cur: u64, e: u64) -> u64 {
        let to_end = self.window - e;
        if cur > 0 {
            to_end + self.window
        } else if prev > 0 {
            to_end
        } else {
            0
        }
    }
}

impl Model for CounterModel {
    fn new(quota: &Quota) -> Self {
        CounterModel {
            limit: quota.limit().min((1 << 24) - 2),
            window: quota.window_nanos(),
            keys: vec![
                CounterState {
                    index: 0,
                    prev: 0,
                    cur: 0
                };
                KEYS as usize
            ],
        }
    }

    fn max_cost(&self) -> u64 {
        self.limit
    }

    fn edge(&self) -> u64 {
        self.window
    }

    fn check(&mut self, key: u64, now: u64, cost: u64) -> Figures {
        let s = self.keys[key as usize];
        let (prev, cur, e) = self.counts_at(s, now);
        let n = cost.max(1);
        let limit = self.limit;
        if !self.fits(s, now, n) {
            // The weight of old units only falls as time passes, so the
            // earliest passing time is found by bisection over [now, now + 2W]
            // (by then every count has decayed).
            let (mut lo, mut hi) = (0u64, 2 * self.window);
            while lo + 1 < hi {
                let mid = lo + (hi - lo) / 2;
                if self.fits(s, now + mid, n) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            return Figures::reject(
                limit,
                self.remaining(prev, cur, e),
                hi,
                self.reset(prev, cur, e),
            );
        }
        if cost == 0 {
            return Figures::admit(
                limit,
                self.remaining(prev, cur, e),
                self.reset(prev, cur, e),
            );
        }
        let cur = cur + cost;
        self.keys[key as usize] = CounterState {
            index: now / self.window,
            prev,
            cur,
        };
        Figures::admit(
            limit,
            self.remaining(prev, cur, e),
            self.reset(prev, cur, e),
        )
    }
}

// ---------------------------------------------------------- sliding window log

/// Exact: a unit admitted at `t` counts while `now < t + W`.
struct LogModel {
    limit: u64,
    window: u64,
    /// Per key: `(admitted at, units)` of every admission still counted.
    keys: Vec<Vec<(u64, u64)>>,
}

impl LogModel {
    fn counted(&self, key: u64, at: u64) -> u64 {
        self.keys[key as usize]
            .iter()
            .filter(|&&(t, _)| u128::from(t) + u128::from(self.window) > u128::from(at))
            .map(|&(_, units)| units)
            .sum()
    }
}

impl Model for LogModel {
    fn new(quota: &Quota) -> Self {
        LogModel {
            limit: quota.limit(),
            window: quota.window_nanos(),
            keys: vec![Vec::new(); KEYS as usize],
        }
    }

    fn max_cost(&self) -> u64 {
        self.limit
    }

    fn edge(&self) -> u64 {
        self.window
    }

    fn check(&mut self, key: u64, now: u64, cost: u64) -> Figures {
        let window = self.window;
        self.keys[key as usize].retain(|&(t, _)| t + window > now);
        let used = self.counted(key, now);
        let limit = self.limit;
        let remaining = limit - used;
        // Empty once the newest unit stops counting.
        let reset = self.keys[key as usize]
            .last()
            .map_or(0, |&(t, _)| t + window - now);
        let n = cost.max(1);
        if used + n > limit {
            // The first instant at which an expiry leaves room for `n`.
            let retry = self.keys[key as usize]
                .iter()
                .map(|&(t, _)| t + window)
                .find(|&at| self.counted(key, at) + n <= limit)
                .map(|at| at - now)
                .unwrap();
            return Figures::reject(limit, remaining, retry, reset);
        }
        if cost == 0 {
            return Figures::admit(limit, remaining, reset);
        }
        self.keys[key as usize].push((now, cost));
        Figures::admit(limit, remaining - cost, window)
    }
}

// ---------------------------------------------------------------- the driver

/// Runs `STEPS` random steps on a limiter for `quota` and on model `M`.
fn drive<A: Algorithm, M: Model>(quota: Quota, seed: u64) {
    let clock = ManualClock::new();
    let limiter = KeyedLimiter::<A, u64, ManualClock>::with_clock(quota, clock.clone());
    let mut model = M::new(&quota);
    let mut rng = SplitMix64::new(seed);
    let max = model.max_cost();
    let edge = model.edge();
    let window = quota.window_nanos();
    let mut last = Figures::admit(0, 0, 0);
    let (mut admitted, mut rejected, mut errors) = (0, 0, 0);
    for step in 0..STEPS {
        let now = clock.now_nanos();
        let advance = match rng.below(12) {
            0 | 1 => 0,
            2 => 1,
            // Exactly onto the next window or refill edge, or just short of it.
            3 => edge - now % edge,
            4 => (edge - now % edge).saturating_sub(1).max(1),
            // Exactly as long as the last answer said to wait.
            5 => last.retry_after,
            6 => last.retry_after.saturating_sub(1),
            7 => last.reset_after,
            8 => edge,
            9 => window,
            _ => rng.below(2 * window / 3 + 2),
        };
        clock.advance(Duration::from_nanos(advance));
        let now = clock.now_nanos();
        let key = rng.below(KEYS);
        let cost = match rng.below(10) {
            0 => 0,
            1 => 1,
            2 => max,
            3 => max + 1,
            4 => u64::MAX,
            5 => max.saturating_add(1 + rng.below(1000)),
            _ => rng.up_to(max.min(1 + max / 3)),
        };
        let got = limiter.check_n(&key, cost);
        if cost > max {
            let error = got.expect_err("a cost above the max must be an error");
            assert_eq!((error.requested, error.max), (cost, max), "step {step}");
            errors += 1;
            continue;
        }
        let got = Figures::from(got.expect("a cost within the max is decided"));
        let want = model.check(key, now, cost);
        assert_eq!(
            got, want,
            "step {step}: key {key}, cost {cost}, now {now}, quota {quota}"
        );
        if got.allowed {
            admitted += 1;
        } else {
            rejected += 1;
        }
        last = got;
    }
    // The run exercised every outcome.
    assert!(
        admitted > 100 && rejected > 100 && errors > 100,
        "{admitted} {rejected} {errors}"
    );
}

fn quotas() -> Vec<Quota> {
    let q = |limit, nanos| Quota::new(limit, Duration::from_nanos(nanos)).unwrap();
    vec![
        Quota::per_second(10),
        // Fractional refill: 1e9 / 3 is not a whole number of nanoseconds.
        q(3, 1_000_000_000),
        q(7, 1_000_003),
        // Tiny windows: the refill interval rounds up to a whole nanosecond.
        q(7, 10),
        q(1000, 1),
        q(1, 1_000),
        Quota::per_minute(100).with_burst(7),
        Quota::per_second(2).with_burst(50),
        q(5, 30 * 1_000_000_000),
        // A day-long window with a limit near the counter's 24 bits: the
        // sliding counter's `prev·e` overflows 64 bits and takes its wide path.
        q(16_000_000, 86_400 * 1_000_000_000),
    ]
}

fn drive_all<A: Algorithm, M: Model>(seed: u64) {
    for (i, quota) in quotas().into_iter().enumerate() {
        drive::<A, M>(quota, seed ^ (i as u64) << 32);
    }
}

#[test]
fn token_bucket_agrees_with_its_model() {
    drive_all::<TokenBucketRule, TokenBucketModel>(0x7B);
}

#[test]
fn fixed_window_agrees_with_its_model() {
    drive_all::<FixedWindowRule, FixedWindowModel>(0xF1);
}

#[test]
fn sliding_window_counter_agrees_with_its_model() {
    drive_all::<SlidingWindowCounterRule, CounterModel>(0x5C);
}

#[test]
fn sliding_window_log_agrees_with_its_model() {
    drive_all::<SlidingWindowLogRule, LogModel>(0x51);
}

#[test]
fn models_agree_across_many_seeds() {
    for seed in 1..6 {
        drive::<TokenBucketRule, TokenBucketModel>(Quota::per_second(4).with_burst(9), seed);
        drive::<FixedWindowRule, FixedWindowModel>(Quota::per_second(9), seed);
        drive::<SlidingWindowCounterRule, CounterModel>(Quota::per_second(9), seed);
        drive::<SlidingWindowLogRule, LogModel>(Quota::per_second(9), seed);
    }
}
