//! Equality of short byte strings without a `memcmp` call.
//!
//! Slice equality calls `memcmp`, which for the short keys a limiter sees
//! (client ids, addresses, API keys) spends more instructions choosing a
//! loop than comparing: about 35 per found key, a seventh of a lookup
//! (`docs/benchmarks.md`, levers). Up to 32 bytes, two overlapping loads
//! from each end cover the whole string, so the comparison is two or four
//! word compares and no call.

/// Whether `a` and `b` hold the same bytes.
#[inline]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let len = a.len();
    if len != b.len() {
        return false;
    }
    // Ordered so the commonest key lengths, 8 to 32 bytes, take the fewest
    // tests.
    if len > 16 {
        if len <= 32 {
            ends_match::<16>(a, b)
        } else {
            a == b
        }
    } else if len >= 8 {
        ends_match::<8>(a, b)
    } else if len >= 4 {
        ends_match::<4>(a, b)
    } else if len > 0 {
        // First, middle and last byte: every byte for lengths 1 to 3.
        a[0] == b[0] && a[len / 2] == b[len / 2] && a[len - 1] == b[len - 1]
    } else {
        true
    }
}

/// Whether the first `N` and the last `N` bytes match, which covers every
/// byte when the common length is between `N` and `2N`.
#[inline(always)]
fn ends_match<const N: usize>(a: &[u8], b: &[u8]) -> bool {
    a.first_chunk::<N>() == b.first_chunk::<N>() && a.last_chunk::<N>() == b.last_chunk::<N>()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length up to 40, every single differing byte, and the equal case.
    #[test]
    fn agrees_with_slice_equality_for_every_length_and_differing_byte() {
        for len in 0..=40usize {
            let a: Vec<u8> = (0..len as u8).map(|i| i.wrapping_mul(37)).collect();
            assert!(same_bytes(&a, &a.clone()), "equal, length {len}");
            for at in 0..len {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!same_bytes(&a, &b), "byte {at} of {len} differs");
            }
            let mut longer = a.clone();
            longer.push(0);
            assert!(!same_bytes(&a, &longer), "length {len} against {}", len + 1);
        }
    }
}
