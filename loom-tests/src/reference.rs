//! Reference models of the four rules, one call at a time, written from the
//! semantics the crate documents rather than from its packed encodings.
//!
//! All share the crate-wide rules: a call of cost `n` is judged as
//! `max(n, 1)` units, a peek (`n = 0`) spends nothing, a denied call changes
//! nothing, and `remaining` is what is left after the call.

use std::collections::VecDeque;

use crate::serial::{Answer, Reference};

/// Judges `wanted` units against `left` and spends them if they fit.
fn spend(left: u64, cost: u64) -> (Answer, u64) {
    let wanted = cost.max(1);
    if wanted > left {
        return (
            Answer {
                allowed: false,
                remaining: left,
            },
            left,
        );
    }
    let left = left - cost;
    (
        Answer {
            allowed: true,
            remaining: left,
        },
        left,
    )
}

/// Any rule while time stands still: a pool of `capacity` units that never
/// refills.
#[derive(Clone, Copy, Debug)]
pub struct Pool {
    /// Units a fresh key holds.
    pub capacity: u64,
}

impl Reference for Pool {
    type State = u64;

    fn fresh(&self) -> u64 {
        self.capacity
    }

    fn answer(&self, left: &mut u64, cost: u64, _now: u64) -> Answer {
        let (answer, after) = spend(*left, cost);
        *left = after;
        answer
    }
}

/// A token bucket of `capacity` tokens refilling one every `interval`
/// nanoseconds, continuously, starting full; tracked as the time the bucket
/// is full again (GCRA).
#[derive(Clone, Copy, Debug)]
pub struct Bucket {
    /// Tokens in a full bucket.
    pub capacity: u64,
    /// Nanoseconds per refilled token.
    pub interval: u64,
}

impl Reference for Bucket {
    /// The time the bucket is full again.
    type State = u64;

    fn fresh(&self) -> u64 {
        0
    }

    fn answer(&self, full_at: &mut u64, cost: u64, now: u64) -> Answer {
        let tolerance = self.capacity * self.interval;
        let debt = full_at.saturating_sub(now);
        let tokens = tolerance.saturating_sub(debt) / self.interval;
        let (answer, _) = spend(tokens, cost);
        if answer.allowed && cost > 0 {
            let debt = debt + cost * self.interval;
            *full_at = now + debt;
            return Answer {
                allowed: true,
                remaining: (tolerance - debt) / self.interval,
            };
        }
        answer
    }
}

/// `limit` units per window of `window` nanoseconds aligned at zero; a call
/// whose reading falls in a window older than the one already counted is
/// counted in the newer window.
#[derive(Clone, Copy, Debug)]
pub struct Windows {
    /// Units per window.
    pub limit: u64,
    /// Window length in nanoseconds.
    pub window: u64,
}

/// A window's number and the units spent in it.
#[derive(Clone, Copy, Debug)]
pub struct WindowCount {
    /// The window number (`time / window`).
    pub index: u64,
    /// Units admitted in it.
    pub used: u64,
}

impl Reference for Windows {
    type State = WindowCount;

    fn fresh(&self) -> WindowCount {
        WindowCount { index: 0, used: 0 }
    }

    fn answer(&self, count: &mut WindowCount, cost: u64, now: u64) -> Answer {
        let index = now / self.window;
        let current = if index > count.index {
            WindowCount { index, used: 0 }
        } else {
            *count
        };
        let (answer, left) = spend(self.limit - current.used, cost);
        if answer.allowed && cost > 0 {
            *count = WindowCount {
                index: current.index,
                used: self.limit - left,
            };
        }
        answer
    }
}

/// The two-window approximation of a sliding window: at `e` nanoseconds
/// into window `W`, the previous window's count weighs `(W - e) / W`; a call
/// of `n` passes when `prev·(W - e) + (cur + n)·W ≤ limit·W`. A reading
/// older than the window already counted is judged at that window's start.
#[derive(Clone, Copy, Debug)]
pub struct SlidingCounts {
    /// Units per sliding window.
    pub limit: u64,
    /// Window length in nanoseconds.
    pub window: u64,
}

/// The counts of the last two windows.
#[derive(Clone, Copy, Debug)]
pub struct TwoWindows {
    /// The current window's number.
    pub index: u64,
    /// Units admitted in the window before it.
    pub prev: u64,
    /// Units admitted in the current window.
    pub cur: u64,
}

impl Reference for SlidingCounts {
    type State = TwoWindows;

    fn fresh(&self) -> TwoWindows {
        TwoWindows {
            index: 0,
            prev: 0,
            cur: 0,
        }
    }

    fn answer(&self, counts: &mut TwoWindows, cost: u64, now: u64) -> Answer {
        let w = self.window;
        let index = now / w;
        let (view, elapsed) = if index == counts.index {
            (*counts, now - index * w)
        } else if index > counts.index {
            let prev = if index == counts.index + 1 {
                counts.cur
            } else {
                0
            };
            (
                TwoWindows {
                    index,
                    prev,
                    cur: 0,
                },
                now - index * w,
            )
        } else {
            (*counts, 0)
        };
        let weighted_prev = u128::from(view.prev) * u128::from(w - elapsed);
        let room =
            (u128::from(self.limit) * u128::from(w)).saturating_sub(weighted_prev) / u128::from(w);
        let room = u64::try_from(room).expect("room is at most the limit");
        let (answer, _) = spend(room.saturating_sub(view.cur), cost);
        if answer.allowed && cost > 0 {
            *counts = TwoWindows {
                cur: view.cur + cost,
                ..view
            };
        }
        answer
    }
}

/// The exact sliding window: a unit admitted at `t` counts until exactly
/// `t + window`; a reading earlier than the newest admission is taken as
/// that admission's time, and expired units are forgotten for good.
#[derive(Clone, Copy, Debug)]
pub struct Log {
    /// Units per sliding window.
    pub limit: u64,
    /// Window length in nanoseconds.
    pub window: u64,
}

impl Reference for Log {
    /// `(admitted at, units)`, oldest first.
    type State = VecDeque<(u64, u64)>;

    fn fresh(&self) -> Self::State {
        VecDeque::new()
    }

    fn answer(&self, log: &mut Self::State, cost: u64, now: u64) -> Answer {
        let now = log.back().map_or(now, |&(at, _)| now.max(at));
        log.retain(|&(at, _)| at + self.window > now);
        let counted: u64 = log.iter().map(|&(_, units)| units).sum();
        let (answer, _) = spend(self.limit - counted, cost);
        if answer.allowed && cost > 0 {
            log.push_back((now, cost));
        }
        answer
    }
}
