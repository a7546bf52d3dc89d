//! The classic design the crate replaces, ported faithfully for comparison:
//! one mutex around a `HashMap` from key to state, time from
//! `std::time::Instant`, and floating-point token refill.
//!
//! It is generic over the mutex so the same code runs under
//! `std::sync::Mutex` and `parking_lot::Mutex`.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::time::{Duration, Instant};

/// A mutex the baseline can run under.
pub trait Lock<T>: Send + Sync {
    /// The mutex holding `value`.
    fn new(value: T) -> Self;
    /// Runs `f` with the lock held.
    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R;
}

impl<T: Send> Lock<T> for std::sync::Mutex<T> {
    fn new(value: T) -> Self {
        std::sync::Mutex::new(value)
    }

    #[inline]
    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut guard = self
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }
}

impl<T: Send> Lock<T> for parking_lot::Mutex<T> {
    fn new(value: T) -> Self {
        parking_lot::Mutex::new(value)
    }

    #[inline]
    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        f(&mut self.lock())
    }
}

/// One classic rule: a per-key state and how a request changes it.
pub trait ClassicRule: Send + Sync {
    /// One key's state.
    type State: Send;
    /// The state of a new key.
    fn fresh(&self, now: Instant) -> Self::State;
    /// Whether one request passes; updates `state` if it does.
    fn allow(&self, state: &mut Self::State, now: Instant) -> bool;
}

/// A token bucket with `f64` tokens refilled on every request.
pub struct ClassicTokenBucket {
    capacity: f64,
    per_second: f64,
}

/// A token bucket's classic state.
pub struct Bucket {
    tokens: f64,
    last: Instant,
}

impl ClassicTokenBucket {
    /// `limit` tokens per `window`, holding at most `burst`.
    pub fn new(limit: u64, window: Duration, burst: u64) -> Self {
        ClassicTokenBucket {
            capacity: burst as f64,
            per_second: limit as f64 / window.as_secs_f64(),
        }
    }
}

impl ClassicRule for ClassicTokenBucket {
    type State = Bucket;

    fn fresh(&self, now: Instant) -> Bucket {
        Bucket {
            tokens: self.capacity,
            last: now,
        }
    }

    #[inline]
    fn allow(&self, bucket: &mut Bucket, now: Instant) -> bool {
        // The time is read before the lock, so a thread may bring an older
        // reading than the last one stored; moving `last` back would refill
        // the same interval twice.
        if now > bucket.last {
            let elapsed = (now - bucket.last).as_secs_f64();
            bucket.tokens = (bucket.tokens + elapsed * self.per_second).min(self.capacity);
            bucket.last = now;
        }
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// A fixed window counter aligned to the key's first request.
pub struct ClassicFixedWindow {
    limit: u64,
    window: Duration,
}

/// A fixed window's classic state.
pub struct Window {
    start: Instant,
    count: u64,
}

impl ClassicFixedWindow {
    /// `limit` requests per `window`.
    pub fn new(limit: u64, window: Duration) -> Self {
        ClassicFixedWindow { limit, window }
    }
}

impl ClassicRule for ClassicFixedWindow {
    type State = Window;

    fn fresh(&self, now: Instant) -> Window {
        Window {
            start: now,
            count: 0,
        }
    }

    #[inline]
    fn allow(&self, window: &mut Window, now: Instant) -> bool {
        if now.saturating_duration_since(window.start) >= self.window {
            window.start = now;
            window.count = 0;
        }
        if window.count < self.limit {
            window.count += 1;
            true
        } else {
            false
        }
    }
}

/// An exact sliding window: a log of admitted request times per key.
pub struct ClassicSlidingLog {
    limit: usize,
    window: Duration,
}

impl ClassicSlidingLog {
    /// `limit` requests in any `window`.
    pub fn new(limit: usize, window: Duration) -> Self {
        ClassicSlidingLog { limit, window }
    }
}

impl ClassicRule for ClassicSlidingLog {
    type State = VecDeque<Instant>;

    fn fresh(&self, _now: Instant) -> VecDeque<Instant> {
        VecDeque::new()
    }

    #[inline]
    fn allow(&self, log: &mut VecDeque<Instant>, now: Instant) -> bool {
        while log
            .front()
            .is_some_and(|&t| now.saturating_duration_since(t) >= self.window)
        {
            log.pop_front();
        }
        if log.len() < self.limit {
            log.push_back(now);
            true
        } else {
            false
        }
    }
}

/// The classic keyed limiter: one lock around the whole map.
pub struct MutexLimiter<L, K, R: ClassicRule> {
    rule: R,
    map: L,
    _key: std::marker::PhantomData<fn(K)>,
}

impl<L, K, R> MutexLimiter<L, K, R>
where
    L: Lock<HashMap<K, R::State>>,
    K: Hash + Eq,
    R: ClassicRule,
{
    /// A limiter applying `rule` to every key.
    pub fn new(rule: R) -> Self {
        MutexLimiter {
            rule,
            map: L::new(HashMap::new()),
            _key: std::marker::PhantomData,
        }
    }

    /// Whether one request for `key` passes.
    #[inline]
    pub fn allow<Q>(&self, key: &Q) -> bool
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized + ToOwned<Owned = K>,
    {
        let now = Instant::now();
        self.map.with(|map| {
            if let Some(state) = map.get_mut(key) {
                return self.rule.allow(state, now);
            }
            let state = map.entry(key.to_owned()).or_insert(self.rule.fresh(now));
            self.rule.allow(state, now)
        })
    }

    /// Keys tracked.
    pub fn len(&self) -> usize {
        self.map.with(|map| map.len())
    }
}

/// The std-mutex token bucket.
pub type StdMutexBucket<K> =
    MutexLimiter<std::sync::Mutex<HashMap<K, Bucket>>, K, ClassicTokenBucket>;
/// The parking_lot-mutex token bucket.
pub type ParkingLotBucket<K> =
    MutexLimiter<parking_lot::Mutex<HashMap<K, Bucket>>, K, ClassicTokenBucket>;
/// The std-mutex fixed window.
pub type StdMutexWindow<K> =
    MutexLimiter<std::sync::Mutex<HashMap<K, Window>>, K, ClassicFixedWindow>;
/// The std-mutex sliding log.
pub type StdMutexLog<K> =
    MutexLimiter<std::sync::Mutex<HashMap<K, VecDeque<Instant>>>, K, ClassicSlidingLog>;
