//! Window numbers stored in the few bits a packed word has left.
//!
//! The window algorithms keep `now / window` modulo `2^bits`. Comparing the
//! stored tag with the current window's tag by wrapping distance tells
//! whether the state belongs to this window, an older one, or a slightly
//! newer one (written by a thread whose clock reading was later than ours).
//! Distances below half the tag range count as "older", the upper half as
//! "ahead". A state left untouched for more than half the range is misread
//! as ahead; `docs/design.md` ("Limits and saturation") gives the range for
//! each limit and what removes an idle key before then.

/// How a stored window relates to the current one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WindowAge {
    /// The state's window is `n` windows before the current one (0: same).
    Older(u64),
    /// The state's window is `n >= 1` windows after the current one.
    Ahead(u64),
}

/// A tag of `bits` bits for window numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WindowTag {
    mask: u64,
}

impl WindowTag {
    /// Tags of `bits` bits, `1 <= bits <= 63`.
    pub(crate) fn with_bits(bits: u32) -> Self {
        let bits = bits.clamp(1, 63);
        WindowTag {
            mask: (1u64 << bits) - 1,
        }
    }

    /// The tag of window number `index`.
    #[inline]
    pub(crate) fn of(&self, index: u64) -> u64 {
        index & self.mask
    }

    /// Where a state tagged `stored` sits relative to window `current_index`.
    #[inline]
    pub(crate) fn age(&self, stored: u64, current_index: u64) -> WindowAge {
        let distance = self.of(current_index).wrapping_sub(stored) & self.mask;
        let half = self.mask / 2 + 1;
        if distance < half {
            WindowAge::Older(distance)
        } else {
            WindowAge::Ahead(self.mask - distance + 1)
        }
    }
}
