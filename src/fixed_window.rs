//! Fixed window: at most `limit` units per window, windows aligned to
//! multiples of `window` on the clock's timeline.
//!
//! # Packed word
//!
//! With `c` = the bit length of `limit + 1` (at most 32):
//!
//! | bits      | field  | meaning                                          |
//! |-----------|--------|--------------------------------------------------|
//! | 63..c     | `tag`  | window number `now / window`, modulo `2^(64-c)`  |
//! | c-1..0    | `used` | units admitted in that window                    |
//!
//! A fresh key is `0` (no units used). A key whose window has passed, or
//! that used nothing, is fresh and may be evicted. If another thread already
//! stored a later window than the one our clock reading falls in, the request
//! is counted in that later window: time never moves backwards for a key.
//!
//! `used` never exceeds the limit, which is below `2^c - 1`, so no state is
//! all ones: that word is [`PackedWord::RETIRED`]. Limits above `2^32 - 2`
//! saturate to `2^32 - 2`; the reported [`limit`](crate::Decision::limit) is
//! the one enforced.

use crate::algorithm::Algorithm;
use crate::clock::MonotonicClock;
use crate::decision::Decision;
use crate::divisor::Divisor;
use crate::keyed::KeyedLimiter;
use crate::packed_word::{PackedWord, Step};
use crate::quota::Quota;
use crate::window_tag::{WindowAge, WindowTag};

/// The largest limit: `limit + 1` must fit the 32 count bits.
const MAX_LIMIT: u64 = u32::MAX as u64 - 1;

/// A keyed fixed-window counter: `quota.limit()` per `quota.window()`.
///
/// ```
/// use std::time::Duration;
/// use tollgate::{FixedWindow, ManualClock, Quota, RateLimiter};
///
/// let clock = ManualClock::new();
/// let limiter: FixedWindow<u64, _> = FixedWindow::with_clock(Quota::per_minute(1), clock.clone());
/// assert!(limiter.allow(&7));
/// assert!(!limiter.allow(&7));
/// clock.advance(Duration::from_secs(60)); // the next window starts from zero
/// assert!(limiter.allow(&7));
/// ```
pub type FixedWindow<K = String, C = MonotonicClock> = KeyedLimiter<FixedWindowRule, K, C>;

/// The fixed-window rule; see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedWindowRule {
    limit: u64,
    /// The window's length in nanoseconds, divided by on every decision.
    window: Divisor,
    count_bits: u32,
    tag: WindowTag,
}

impl FixedWindowRule {
    #[inline]
    fn count_mask(&self) -> u64 {
        (1u64 << self.count_bits) - 1
    }

    /// The window number and units used that apply at window `now_index`.
    #[inline]
    fn current(&self, word: u64, now_index: u64) -> (u64, u64) {
        let used = word & self.count_mask();
        if used == 0 {
            return (now_index, 0);
        }
        match self.tag.age(word >> self.count_bits, now_index) {
            WindowAge::Older(0) => (now_index, used),
            WindowAge::Older(_) => (now_index, 0),
            WindowAge::Ahead(by) => (now_index.saturating_add(by), used),
        }
    }

    /// The pure decision for one old word.
    // Always inlined: see `PackedWord::update`.
    #[inline(always)]
    fn step(&self, word: u64, now: u64, cost: u64) -> Step {
        let (index, used) = self.current(word, self.window.divide(now));
        let window_end = index.saturating_add(1).saturating_mul(self.window.get());
        let until_end = window_end.saturating_sub(now);
        let wanted = cost.max(1);
        // `used <= limit`; compared without a sum, since `Algorithm::check`
        // can be called with any cost.
        if wanted > self.limit - used {
            let reset = if used == 0 { 0 } else { until_end };
            return Step {
                decision: Decision::reject(self.limit, self.limit - used, until_end, reset),
                next: None,
            };
        }
        if cost == 0 {
            let reset = if used == 0 { 0 } else { until_end };
            return Step {
                decision: Decision::admit(self.limit, self.limit - used, reset),
                next: None,
            };
        }
        let used = used + cost;
        Step {
            decision: Decision::admit(self.limit, self.limit - used, until_end),
            next: Some((self.tag.of(index) << self.count_bits) | used),
        }
    }
}

impl Algorithm for FixedWindowRule {
    type State = PackedWord;

    fn from_quota(quota: &Quota) -> Self {
        let limit = quota.limit().min(MAX_LIMIT);
        // One more than the limit fits, so the count field is never all ones.
        let count_bits = u64::BITS - (limit + 1).leading_zeros();
        FixedWindowRule {
            limit,
            window: Divisor::new(quota.window_nanos()),
            count_bits,
            tag: WindowTag::with_bits(u64::BITS - count_bits),
        }
    }

    #[inline]
    fn fresh(&self) -> PackedWord {
        PackedWord::new(0)
    }

    #[inline]
    fn limit(&self) -> u64 {
        self.limit
    }

    // Always inlined: see `PackedWord::update`.
    #[inline(always)]
    fn check(&self, state: &PackedWord, now: u64, cost: u64) -> Option<Decision> {
        state.update(|word| self.step(word, now, cost))
    }

    #[inline]
    fn is_fresh(&self, state: &PackedWord, now: u64) -> bool {
        self.current(state.load(), self.window.divide(now)).1 == 0
    }

    fn reset_bound_nanos(&self) -> u64 {
        self.window.get()
    }
}
