//! The floor under any one-key limiter: one clock read and one uncontended
//! compare-and-swap loop on one word, with no decision logic.

use std::sync::atomic::{AtomicU64, Ordering};

use tollgate::Clock;

/// Reads `clock`, then moves `word` to at least `now + cost`.
#[inline]
pub fn clock_and_cas(clock: &impl Clock, word: &AtomicU64, cost: u64) -> bool {
    cas(word, clock.now_nanos().wrapping_add(cost))
}

/// One CAS loop storing `old + 1` unless `old` already passed `limit`,
/// the same shape as a limiter's update.
#[inline]
pub fn cas(word: &AtomicU64, limit: u64) -> bool {
    // Relaxed: a lone counter, like a limiter's packed word.
    let mut current = word.load(Ordering::Relaxed);
    loop {
        let next = current.max(limit).wrapping_add(1);
        match word.compare_exchange_weak(current, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(actual) => current = actual,
        }
    }
}
