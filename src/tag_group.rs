//! Eight one-byte slot tags in one `u64` word, searched all at once with
//! word arithmetic (SWAR), so a lookup reads one word per eight slots and
//! branches once per group instead of once per slot.
//!
//! | byte `i` of the word (bits `8i..8i+8`) | meaning                                  |
//! |----------------------------------------|------------------------------------------|
//! | `0x00`                                 | slot `i` of the group is empty           |
//! | `1xxxxxxx`                             | slot `i` is taken by a key whose hash ends in `xxxxxxx` |
//!
//! Only these values occur, so bit 7 of a byte alone says whether its slot
//! is taken.

/// Slots per group: the bytes of a `u64`.
pub(crate) const GROUP: usize = 8;

/// The tag of an empty slot.
#[cfg(test)]
pub(crate) const EMPTY: u8 = 0;

/// The bit every taken slot's tag has.
pub(crate) const TAKEN: u8 = 0x80;

/// `0x01` in every byte.
const LOW_BITS: u64 = 0x0101_0101_0101_0101;

/// `0x80` in every byte.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The tag of a key hashing to `hash`: its low seven bits, marked taken.
#[inline]
pub(crate) fn tag_of(hash: u64) -> u8 {
    // Truncation keeps the low byte, whose top bit the mask replaces.
    TAKEN | (hash as u8 & !TAKEN)
}

/// Bit 7 set in each byte of `word` that is a taken slot and may hold
/// `tag`: every byte equal to `tag` is set, and rarely a taken byte just
/// above one (the subtraction's borrow), which the caller's key comparison
/// rejects. Never an empty slot's byte.
#[inline]
pub(crate) fn candidates(word: u64, tag: u8) -> u64 {
    let differs = word ^ (LOW_BITS * u64::from(tag));
    // A byte of `differs` is zero exactly where `word` holds `tag`; the
    // classic zero-byte test flags those (and maybe a byte above one), and
    // `& word` keeps only bytes whose slot is taken.
    differs.wrapping_sub(LOW_BITS) & !differs & HIGH_BITS & word
}

/// Bit 7 set in each byte of `word` whose slot is empty.
#[inline]
pub(crate) fn empties(word: u64) -> u64 {
    !word & HIGH_BITS
}

/// Bit 7 set in each byte of `word` whose slot is taken.
#[inline]
fn taken(word: u64) -> u64 {
    word & HIGH_BITS
}

/// The slots of `word` that are taken, in slot order.
#[inline]
pub(crate) fn taken_slots(word: u64) -> TakenSlots {
    TakenSlots(taken(word))
}

/// The taken slots of one group's word not yet yielded, as a [`taken`]
/// mask; a named type so a struct can hold it between calls.
pub(crate) struct TakenSlots(u64);

impl Iterator for TakenSlots {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        (self.0 != 0).then(|| {
            let slot = first_slot(self.0);
            self.0 = without_first(self.0);
            slot
        })
    }
}

/// The slot within the group of the lowest byte flagged in `mask` (a value
/// from [`candidates`], [`empties`] or [`taken`], not zero).
#[inline]
pub(crate) fn first_slot(mask: u64) -> usize {
    // At most 63 / 8: fits any usize.
    (mask.trailing_zeros() / 8) as usize
}

/// `mask` without its lowest flagged byte.
#[inline]
pub(crate) fn without_first(mask: u64) -> u64 {
    mask & mask.wrapping_sub(1)
}

/// The tag of slot `slot` (below [`GROUP`]) in `word`.
#[cfg(test)]
pub(crate) fn tag_at(word: u64, slot: usize) -> u8 {
    // Truncation keeps the slot's byte.
    (word >> (8 * slot)) as u8
}

/// `word` with slot `slot` (below [`GROUP`]) holding `tag`.
#[inline]
pub(crate) fn with_tag(word: u64, slot: usize, tag: u8) -> u64 {
    (word & !(0xff << (8 * slot))) | (u64::from(tag) << (8 * slot))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flagged(mask: u64) -> Vec<usize> {
        let mut slots = Vec::new();
        let mut mask = mask;
        while mask != 0 {
            slots.push(first_slot(mask));
            mask = without_first(mask);
        }
        slots
    }

    #[test]
    fn candidates_are_every_equal_byte_and_never_an_empty_one() {
        // Every word of tags from a small alphabet, at every pair of positions.
        let alphabet = [EMPTY, 0x80, 0x81, 0x82, 0xfe, 0xff];
        for tag in [0x80u8, 0x81, 0xff] {
            for a in alphabet {
                for b in alphabet {
                    for (i, j) in [(0, 1), (3, 4), (6, 7), (0, 7)] {
                        let word = with_tag(with_tag(0, i, a), j, b);
                        let found = flagged(candidates(word, tag));
                        for slot in 0..GROUP {
                            let byte = tag_at(word, slot);
                            if byte == tag {
                                assert!(found.contains(&slot), "{word:#x} {tag:#x} {slot}");
                            }
                            if byte == EMPTY {
                                assert!(!found.contains(&slot), "{word:#x} {tag:#x} {slot}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn empties_are_exactly_the_empty_bytes() {
        let mut word = 0;
        assert_eq!(flagged(empties(word)), (0..GROUP).collect::<Vec<_>>());
        for slot in [2, 5, 7, 0] {
            word = with_tag(word, slot, tag_of(slot as u64 * 37));
        }
        assert_eq!(flagged(empties(word)), vec![1, 3, 4, 6]);
        assert_eq!(taken_slots(word).collect::<Vec<_>>(), vec![0, 2, 5, 7]);
        assert_eq!(taken_slots(0).count(), 0);
        assert_eq!(flagged(taken(word)), vec![0, 2, 5, 7]);
        assert_eq!(tag_at(word, 5), tag_of(5 * 37));
        assert_eq!(tag_at(word, 1), EMPTY);
    }

    #[test]
    fn tags_are_taken_and_keep_seven_hash_bits() {
        assert_eq!(tag_of(0), TAKEN);
        assert_eq!(tag_of(0x1234_5685), 0x85);
        assert_eq!(tag_of(0x05), 0x85);
        assert_ne!(tag_of(0x05), tag_of(0x06));
    }
}
