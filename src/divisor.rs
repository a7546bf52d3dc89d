//! [`Divisor`]: a divisor fixed when a rule is built, divided by with a
//! multiply instead of a `div` instruction.
//!
//! Every rule divides by one of its own constants on each decision (the
//! token bucket's interval, a window's length). A 64-bit `div` costs tens of
//! cycles and was the largest single cost of a direct decision
//! (`docs/benchmarks.md`, levers); a multiply by a reciprocal computed once
//! gives the same quotient in a few. The arithmetic is `strength_reduce`'s,
//! a small, widely used crate with exhaustive and property tests.

use std::fmt;

use strength_reduce::StrengthReducedU64;

/// A non-zero `u64` divisor with a precomputed reciprocal.
#[derive(Clone, Copy)]
pub(crate) struct Divisor(StrengthReducedU64);

impl Divisor {
    /// A divisor of `value`, or of 1 when `value` is 0 (rules clamp their
    /// divisors to at least 1 before they get here).
    pub(crate) fn new(value: u64) -> Self {
        Divisor(StrengthReducedU64::new(value.max(1)))
    }

    /// The divisor's value.
    #[inline]
    pub(crate) fn get(self) -> u64 {
        self.0.get()
    }

    /// `numerator / self`, rounded down.
    #[inline]
    pub(crate) fn divide(self, numerator: u64) -> u64 {
        numerator / self.0
    }

    /// `(numerator / self, numerator % self)`.
    #[inline]
    pub(crate) fn divide_with_remainder(self, numerator: u64) -> (u64, u64) {
        StrengthReducedU64::div_rem(numerator, self.0)
    }
}

impl PartialEq for Divisor {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for Divisor {}

impl fmt::Debug for Divisor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.get(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Quotients and remainders against the `div` instruction at the edges
    /// the rules reach: small and huge divisors, powers of two and their
    /// neighbours, numerators up to `u64::MAX`.
    #[test]
    fn agrees_with_the_div_instruction() {
        let mut divisors = vec![1, 2, 3, 7, 10, 1_000, 999_999_937, 1 << 62, u64::MAX];
        for shift in [1, 20, 32, 40, 63] {
            let power = 1u64 << shift;
            divisors.extend([power - 1, power, power + 1]);
        }
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut numerators = vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 63];
        for _ in 0..2_000 {
            // xorshift: cheap, deterministic spread over the whole range.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            numerators.push(state);
            numerators.push(state >> (state % 64));
        }
        for &d in &divisors {
            let divisor = Divisor::new(d);
            assert_eq!(divisor.get(), d);
            for &n in &numerators {
                assert_eq!(divisor.divide(n), n / d, "{n} / {d}");
                assert_eq!(
                    divisor.divide_with_remainder(n),
                    (n / d, n % d),
                    "{n} / {d}"
                );
            }
        }
    }

    #[test]
    fn zero_is_taken_as_one_and_equality_is_by_value() {
        assert_eq!(Divisor::new(0).get(), 1);
        assert_eq!(Divisor::new(0).divide(41), 41);
        assert_eq!(Divisor::new(12), Divisor::new(12));
        assert_ne!(Divisor::new(12), Divisor::new(13));
        assert_eq!(format!("{:?}", Divisor::new(12)), "12");
    }
}
