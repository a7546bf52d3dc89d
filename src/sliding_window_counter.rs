//! Sliding window counter: the two-counter approximation of a sliding window.
//!
//! The count of the previous fixed window is weighted by how much of it the
//! sliding window still overlaps. At elapsed time `e` into the current window
//! of length `W`, a request of `n` passes when
//! `prev·(W - e) + (cur + n)·W ≤ limit·W`, computed exactly in integers.
//! O(1) memory per key; it assumes the previous window's units were spread
//! evenly, so it can admit slightly more or less than an exact log would.
//!
//! # Packed word
//!
//! With `c` = the bit length of `limit + 1` (at most 24):
//!
//! | bits      | field  | meaning                                           |
//! |-----------|--------|---------------------------------------------------|
//! | 63..2c    | `tag`  | current window number, modulo `2^(64-2c)`         |
//! | 2c-1..c   | `prev` | units admitted in the window before it            |
//! | c-1..0    | `cur`  | units admitted in the current window              |
//!
//! A fresh key is `0`. A key is fresh when both counts that still apply are
//! zero (its last busy window is two or more windows old). Counts never
//! exceed the limit, which is below `2^c - 1`, so no state is all ones: that
//! word is [`PackedWord::RETIRED`]. Limits above `2^24 - 2` saturate to
//! `2^24 - 2`.

use crate::algorithm::Algorithm;
use crate::clock::MonotonicClock;
use crate::decision::Decision;
use crate::divisor::Divisor;
use crate::keyed::KeyedLimiter;
use crate::packed_word::{PackedWord, Step};
use crate::quota::Quota;
use crate::window_tag::{WindowAge, WindowTag};

/// The largest limit: `limit + 1` must fit the 24 bits of each count.
const MAX_LIMIT: u64 = (1 << 24) - 2;

/// A keyed sliding-window counter: about `quota.limit()` per any
/// `quota.window()`-long span.
pub type SlidingWindowCounter<K = String, C = MonotonicClock> =
    KeyedLimiter<SlidingWindowCounterRule, K, C>;

/// The sliding-window-counter rule; see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlidingWindowCounterRule {
    limit: u64,
    /// The window's length in nanoseconds, divided by on every decision.
    window: Divisor,
    count_bits: u32,
    tag: WindowTag,
}

/// The counts that apply at one instant.
#[derive(Clone, Copy, Debug)]
struct Counts {
    /// The window the counts belong to.
    index: u64,
    /// Nanoseconds from `now` until that window starts (0 unless ahead).
    lead: u64,
    /// Nanoseconds into that window (0 when it starts later).
    elapsed: u64,
    prev: u64,
    cur: u64,
}

impl SlidingWindowCounterRule {
    #[inline]
    fn count_mask(&self) -> u64 {
        (1u64 << self.count_bits) - 1
    }

    #[inline]
    fn current(&self, word: u64, now: u64) -> Counts {
        let mask = self.count_mask();
        let (stored_prev, stored_cur) = ((word >> self.count_bits) & mask, word & mask);
        let (now_index, elapsed) = self.window.divide_with_remainder(now);
        let zero = Counts {
            index: now_index,
            lead: 0,
            elapsed,
            prev: 0,
            cur: 0,
        };
        if stored_prev == 0 && stored_cur == 0 {
            return zero;
        }
        match self.tag.age(word >> (2 * self.count_bits), now_index) {
            WindowAge::Older(0) => Counts {
                prev: stored_prev,
                cur: stored_cur,
                ..zero
            },
            WindowAge::Older(1) => Counts {
                prev: stored_cur,
                ..zero
            },
            WindowAge::Older(_) => zero,
            // Our reading is earlier than another thread's: use its window,
            // from its start.
            WindowAge::Ahead(by) => {
                let index = now_index.saturating_add(by);
                Counts {
                    index,
                    lead: index.saturating_mul(self.window.get()).saturating_sub(now),
                    elapsed: 0,
                    prev: stored_prev,
                    cur: stored_cur,
                }
            }
        }
    }

    /// Whether `cost` more units fit at these counts.
    #[inline]
    fn fits(&self, counts: &Counts, cost: u64) -> bool {
        let w = u128::from(self.window.get());
        let weighted_prev = u128::from(counts.prev) * (w - u128::from(counts.elapsed));
        // Widened before the sum: `Algorithm::check` can be called with any cost.
        weighted_prev + (u128::from(counts.cur) + u128::from(cost)) * w
            <= u128::from(self.limit) * w
    }

    /// Units that fit now: `⌊(limit·W - prev·(W - e)) / W⌋ - cur`, which is
    /// `limit + ⌊prev·e / W⌋ - prev - cur` (the `prev·W` term divides exactly),
    /// floored at zero.
    #[inline]
    fn remaining(&self, counts: &Counts) -> u64 {
        let decayed = match counts.prev.checked_mul(counts.elapsed) {
            Some(product) => self.window.divide(product),
            // Windows over about 18 minutes with a busy previous window.
            None => self.decayed_wide(counts),
        };
        // `decayed <= prev <= limit`, so the sum cannot overflow.
        (self.limit + decayed)
            .saturating_sub(counts.prev)
            .saturating_sub(counts.cur)
    }

    /// `⌊prev·e / W⌋` when `prev·e` does not fit 64 bits.
    #[cold]
    fn decayed_wide(&self, counts: &Counts) -> u64 {
        let product = u128::from(counts.prev) * u128::from(counts.elapsed);
        // Below `prev`, since `e < W`.
        u64::try_from(product / u128::from(self.window.get())).unwrap_or(counts.prev)
    }

    /// Earliest offset into a window with `prev` weighted against `extra`
    /// units: the smallest `e` with `prev·(W - e) ≤ (limit - extra)·W`.
    #[inline]
    fn earliest_fit(&self, prev: u64, extra: u64) -> Option<u64> {
        let room = self.limit.checked_sub(extra)?;
        if prev == 0 {
            return Some(0);
        }
        let w = u128::from(self.window.get());
        let span = (u128::from(room) * w / u128::from(prev)).min(w);
        // span <= W, which is a u64.
        Some(self.window.get() - u64::try_from(span).unwrap_or(self.window.get()))
    }

    /// How long until `cost` units fit, given they do not fit now.
    #[inline]
    fn retry_after(&self, counts: &Counts, cost: u64) -> u64 {
        let to_window_end = counts
            .lead
            .saturating_add(self.window.get() - counts.elapsed);
        if let Some(at) = self.earliest_fit(counts.prev, counts.cur.saturating_add(cost))
            && at < self.window.get()
        {
            return counts
                .lead
                .saturating_add(at.saturating_sub(counts.elapsed));
        }
        // Next window: the current count becomes the weighted one.
        let at = self
            .earliest_fit(counts.cur, cost)
            .unwrap_or(self.window.get());
        to_window_end.saturating_add(at)
    }

    /// How long until every count that applies has decayed to zero.
    #[inline]
    fn reset_after(&self, counts: &Counts) -> u64 {
        let to_window_end = counts
            .lead
            .saturating_add(self.window.get() - counts.elapsed);
        if counts.cur > 0 {
            to_window_end.saturating_add(self.window.get())
        } else if counts.prev > 0 {
            to_window_end
        } else {
            0
        }
    }

    /// The pure decision for one old word.
    // Always inlined: see `PackedWord::update`.
    #[inline(always)]
    fn step(&self, word: u64, now: u64, cost: u64) -> Step {
        let counts = self.current(word, now);
        let wanted = cost.max(1);
        if !self.fits(&counts, wanted) {
            return Step {
                decision: Decision::reject(
                    self.limit,
                    self.remaining(&counts),
                    self.retry_after(&counts, wanted),
                    self.reset_after(&counts),
                ),
                next: None,
            };
        }
        if cost == 0 {
            return Step {
                decision: Decision::admit(
                    self.limit,
                    self.remaining(&counts),
                    self.reset_after(&counts),
                ),
                next: None,
            };
        }
        let after = Counts {
            cur: counts.cur + cost,
            ..counts
        };
        let tag = self.tag.of(after.index);
        Step {
            decision: Decision::admit(self.limit, self.remaining(&after), self.reset_after(&after)),
            next: Some(
                (tag << (2 * self.count_bits)) | (after.prev << self.count_bits) | after.cur,
            ),
        }
    }
}

impl Algorithm for SlidingWindowCounterRule {
    type State = PackedWord;

    fn from_quota(quota: &Quota) -> Self {
        let limit = quota.limit().min(MAX_LIMIT);
        // One more than the limit fits, so the count fields are never all ones.
        let count_bits = u64::BITS - (limit + 1).leading_zeros();
        SlidingWindowCounterRule {
            limit,
            window: Divisor::new(quota.window_nanos()),
            count_bits,
            tag: WindowTag::with_bits(u64::BITS - 2 * count_bits),
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
        let counts = self.current(state.load(), now);
        counts.prev == 0 && counts.cur == 0
    }

    fn reset_bound_nanos(&self) -> u64 {
        self.window.get().saturating_mul(2)
    }
}
