//! One timed pass of a token bucket over its keys in a given order, for
//! the scans that compare many limiters on the same keys.

use std::hash::Hash;
use std::hint::black_box;
use std::time::Instant;

use tollgate::{Key, RateLimiter, TokenBucket};

/// Nanoseconds per decision of one pass over `order`'s keys, or `None` if
/// any was refused (a bucket of a billion tokens cannot run dry here).
pub fn timed_pass<K: Key + Hash + Eq>(
    limiter: &TokenBucket<K>,
    keys: &[K],
    order: &[usize],
) -> Option<f64> {
    let mut admitted = 0;
    let began = Instant::now();
    for &i in order {
        admitted += usize::from(limiter.allow(black_box(&keys[i])));
    }
    let ns = began.elapsed().as_nanos() as f64 / order.len() as f64;
    (admitted == order.len()).then_some(ns)
}
