//! Key sets and the cheap generator that picks among them.

/// A xorshift64* generator: a few cycles per number, so picking a key costs
/// far less than any limiter being measured.
#[derive(Clone, Debug)]
pub struct Pick(u64);

impl Pick {
    /// A generator from `seed` (zero is replaced, xorshift needs a set bit).
    pub fn new(seed: u64) -> Self {
        Pick(seed | 1)
    }

    /// The next index below `n`, by multiply-shift instead of a division.
    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        ((u128::from(x) * n as u128) >> 64) as usize
    }
}

/// `n` distinct string keys shaped like client identifiers.
pub fn string_keys(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("client-{i:08}")).collect()
}

/// `n` distinct integer keys, spread so neighbours do not share low bits.
pub fn u64_keys(n: usize) -> Vec<u64> {
    (0..n as u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect()
}
