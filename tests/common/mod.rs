//! Helpers shared by the integration tests.

// Each test binary compiles this module and uses a different part of it.
#![allow(dead_code)]

use tollgate::Decision;

/// A small seeded PRNG (splitmix64): reproducible runs, no dependency.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`); the tiny modulo bias does not matter here.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform in `0..=max`.
    pub fn up_to(&mut self, max: u64) -> u64 {
        if max == u64::MAX {
            self.next_u64()
        } else {
            self.below(max + 1)
        }
    }

    /// True with probability `1 / n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}

/// The five figures of a decision, for comparing with a model's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Figures {
    pub allowed: bool,
    pub limit: u64,
    pub remaining: u64,
    pub retry_after: u64,
    pub reset_after: u64,
}

impl Figures {
    pub fn admit(limit: u64, remaining: u64, reset_after: u64) -> Self {
        Figures {
            allowed: true,
            limit,
            remaining,
            retry_after: 0,
            reset_after,
        }
    }

    pub fn reject(limit: u64, remaining: u64, retry_after: u64, reset_after: u64) -> Self {
        Figures {
            allowed: false,
            limit,
            remaining,
            retry_after,
            reset_after,
        }
    }
}

impl From<Decision> for Figures {
    fn from(d: Decision) -> Self {
        Figures {
            allowed: d.allowed(),
            limit: d.limit(),
            remaining: d.remaining(),
            retry_after: d.retry_after_nanos(),
            reset_after: d.reset_after_nanos(),
        }
    }
}

pub const MS: u64 = 1_000_000;
pub const SEC: u64 = 1_000_000_000;
