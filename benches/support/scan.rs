//! Timing many token buckets on the same keys against a reference limiter,
//! for the scans that look for limiters slow for their whole life
//! (`examples/placement_scan.rs`, `examples/page_colours.rs`).

use std::hash::Hash;
use std::hint::black_box;
use std::time::Instant;

use tollgate::{Key, RateLimiter, TokenBucket};

use super::keys::Pick;

/// Timed passes per limiter, each taking turns with the reference.
pub const PASSES: usize = 5;

/// The slowest limiters kept and timed again at the end.
pub const RETIMED: usize = 8;

/// How many times each of those is timed again.
pub const RETIMED_ROUNDS: usize = 3;

/// `0..n` in a fixed shuffled order, so passes do not walk the keys in
/// the order they were inserted.
pub fn shuffled_order(n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut pick = Pick::new(0x5eed);
    for i in (1..order.len()).rev() {
        order.swap(i, pick.below(i + 1));
    }
    order
}

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

/// `limiter`'s best of [`PASSES`] passes over the reference's best, the
/// two taking turns so a slow moment of the machine slows both; `None` if
/// either refused a key.
pub fn ratio_to_reference<K: Key + Hash + Eq>(
    limiter: &TokenBucket<K>,
    reference: &TokenBucket<K>,
    keys: &[K],
    order: &[usize],
) -> Option<f64> {
    let (mut best, mut best_reference) = (f64::MAX, f64::MAX);
    for _ in 0..PASSES {
        best_reference = best_reference.min(timed_pass(reference, keys, order)?);
        best = best.min(timed_pass(limiter, keys, order)?);
    }
    Some(best / best_reference)
}

/// The [`RETIMED`] slowest items offered so far by ratio, slowest first,
/// kept alive to be timed again: a limiter slow for its life stays slow, a
/// slow moment of the machine does not.
pub struct Slowest<T>(Vec<(f64, T)>);

impl<T> Slowest<T> {
    /// None kept yet.
    pub fn new() -> Self {
        Slowest(Vec::with_capacity(RETIMED + 1))
    }

    /// Keeps `item` if its `ratio` is among the slowest so far.
    pub fn offer(&mut self, ratio: f64, item: T) {
        if self.0.len() < RETIMED || ratio > self.0[RETIMED - 1].0 {
            self.0.push((ratio, item));
            self.0.sort_by(|a, b| b.0.total_cmp(&a.0));
            self.0.truncate(RETIMED);
        }
    }

    /// The kept items and their ratios, slowest first.
    pub fn kept(&self) -> &[(f64, T)] {
        &self.0
    }
}
