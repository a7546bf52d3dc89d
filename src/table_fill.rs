//! [`TableFill`]: how full a shard's table may get before its keys move to
//! a larger one, and how much room a move leaves.
//!
//! | setting | after a move | moves when more than | bytes per `u64` key | bytes per 15-byte `String` key |
//! |---|---|---|---|---|
//! | [`ROOMY`](TableFill::ROOMY) (default) | 1/3 full | 5/8 full | 27 to 51 | 53 to 99 |
//! | [`COMPACT`](TableFill::COMPACT) | 1/2 full | 7/8 full | 19 to 34 | 37 to 66 |
//!
//! A lookup reads its key's group of eight tags as one word
//! ([`tag_group`](crate::tag_group)), so a fuller table costs a lookup
//! little time of its own: on 10,000 `String` keys one thread ran as fast
//! either way. Two threads on 10,000 shared keys made about 4 % fewer
//! decisions with compact tables (`docs/benchmarks.md`, levers; the cause
//! was not isolated). Compact
//! tables ([`KeyedOptions::compact_tables`](crate::KeyedOptions::compact_tables))
//! spend about half the memory instead.

/// How full a table may get; see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TableFill {
    /// Slots per key, in eighths, in a table a move builds.
    eighths_per_key: usize,
    /// Eighths of the slots that may be taken before the table moves.
    max_eighths: usize,
}

impl TableFill {
    /// The default: a third to five eighths full.
    pub(crate) const ROOMY: TableFill = TableFill {
        eighths_per_key: 24,
        max_eighths: 5,
    };

    /// A half to seven eighths full.
    pub(crate) const COMPACT: TableFill = TableFill {
        eighths_per_key: 16,
        max_eighths: 7,
    };

    /// Whether a table of `capacity` slots with `taken` of them taken must
    /// move; it always leaves a slot empty, so probes end.
    #[inline]
    pub(crate) fn too_full(self, taken: usize, capacity: usize) -> bool {
        taken * 8 > capacity * self.max_eighths
    }

    /// The slots of a table built for `keys` keys: more than `keys`, so a
    /// move leaves no key behind and room for the next.
    pub(crate) fn capacity_for(self, keys: usize) -> usize {
        (keys.saturating_mul(self.eighths_per_key) / 8).saturating_add(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the count, a freshly moved table has room for the next key
    /// without moving again, and a table never fills up.
    #[test]
    fn a_moved_table_takes_the_next_key_and_never_fills() {
        for fill in [TableFill::ROOMY, TableFill::COMPACT] {
            for keys in 1..2_000 {
                let capacity = fill.capacity_for(keys);
                assert!(capacity > keys, "{fill:?}: {keys} keys in {capacity}");
                assert!(!fill.too_full(keys + 1, capacity), "{fill:?}: {keys}");
                // The last count before a move still leaves a slot empty.
                let most = (0..=capacity)
                    .take_while(|&t| !fill.too_full(t, capacity))
                    .last();
                assert!(most.is_some_and(|most| most < capacity), "{fill:?}: {keys}");
            }
        }
    }
}
