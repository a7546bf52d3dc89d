//! [`TableFill`]: how full a shard's table may get before its keys move to
//! a larger one, and how much room a move leaves.
//!
//! | setting | table | after a move | moves when more than | bytes per `u64` key | bytes per 15-byte `String` key |
//! |---|---|---|---|---|---|
//! | [`DEFAULT`](TableFill::DEFAULT) | under [`LARGE_TABLE_SLOTS`] slots (fewer past 8 shards) | 1/3 full | 5/8 full | 27 to 51 | 53 to 99 |
//! | [`DEFAULT`](TableFill::DEFAULT) | from [`LARGE_TABLE_SLOTS`] slots (fewer past 8 shards) | 1/2 full | 7/8 full | 19 to 34 | 37 to 66 |
//! | [`COMPACT`](TableFill::COMPACT) | any | 1/2 full | 7/8 full | 19 to 34 | 37 to 66 |
//!
//! A lookup reads its key's group of eight tags as one word
//! ([`tag_group`](crate::tag_group)), so a fuller table costs a lookup
//! little time of its own. Where a shard's keys fit the caches, two threads
//! on shared keys made about 4 % fewer decisions with fuller tables (10,000
//! keys over 8 shards; the cause was not isolated), so small tables stay
//! roomy. Once a shard's table is large its lookups miss the caches anyway,
//! and the fuller tables were as fast on one thread and faster on two
//! (100,000 keys; `docs/benchmarks.md`, levers), for about half the
//! memory. Compact tables at every size
//! ([`KeyedOptions::compact_tables`](crate::KeyedOptions::compact_tables))
//! save the memory of small tables too.

/// Slots from which the default fill keeps a table compact: 16,384 (a
/// shard holding more than about 5,400 keys), 256 KiB of `u64` entries or
/// 512 KiB of `String` ones, in a store of up to [`SHARDS_AT_FULL_SIZE`]
/// shards.
pub(crate) const LARGE_TABLE_SLOTS: usize = 1 << 14;

/// Shards up to which a table turns compact at [`LARGE_TABLE_SLOTS`]; in a
/// store of more shards the threshold shrinks in proportion, so all the
/// store's tables together turn compact at the same size (131,072 slots).
/// Whether lookups miss the caches depends on that total, not on one
/// shard's table: four shards per CPU made a 16-core machine's tables at
/// 100,000 keys under a third of the threshold each, all roomy, 32.9 bytes per
/// `u64` key against 22.5 with 8 shards (`docs/benchmarks.md`).
pub(crate) const SHARDS_AT_FULL_SIZE: usize = 8;

/// How full a table may get; see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TableFill {
    /// Slots from which a table is large and kept compact; smaller tables
    /// are kept roomy.
    compact_from: usize,
}

/// Slots per key, in eighths, in a table a move builds: roomy and compact.
const ROOMY_EIGHTHS_PER_KEY: usize = 24;
const COMPACT_EIGHTHS_PER_KEY: usize = 16;

/// Eighths of a table's slots that may be taken before it moves: roomy and
/// compact.
const ROOMY_MAX_EIGHTHS: usize = 5;
const COMPACT_MAX_EIGHTHS: usize = 7;

impl TableFill {
    /// The default: small tables a third to five eighths full, large ones a
    /// half to seven eighths.
    pub(crate) const DEFAULT: TableFill = TableFill {
        compact_from: LARGE_TABLE_SLOTS,
    };

    /// Every table a half to seven eighths full.
    pub(crate) const COMPACT: TableFill = TableFill { compact_from: 0 };

    /// This fill for one of `shards` shards: past [`SHARDS_AT_FULL_SIZE`]
    /// shards a table turns compact at a proportionally smaller size.
    pub(crate) fn for_shards(self, shards: usize) -> Self {
        TableFill {
            compact_from: self.compact_from * SHARDS_AT_FULL_SIZE / shards.max(SHARDS_AT_FULL_SIZE),
        }
    }

    /// Whether a table of `capacity` slots with `taken` of them taken must
    /// move; it always leaves a slot empty, so probes end.
    #[inline]
    pub(crate) fn too_full(self, taken: usize, capacity: usize) -> bool {
        let max_eighths = if self.is_compact(capacity) {
            COMPACT_MAX_EIGHTHS
        } else {
            ROOMY_MAX_EIGHTHS
        };
        taken * 8 > capacity * max_eighths
    }

    /// Whether a table of `capacity` slots is kept compact.
    pub(crate) fn is_compact(self, capacity: usize) -> bool {
        capacity >= self.compact_from
    }

    /// The slots of a table built for `keys` keys: more than `keys`, so a
    /// move leaves no key behind and room for the next. A table that would
    /// be large even roomy is built compact.
    pub(crate) fn capacity_for(self, keys: usize) -> usize {
        let slots = |eighths: usize| (keys.saturating_mul(eighths) / 8).saturating_add(1);
        let roomy = slots(ROOMY_EIGHTHS_PER_KEY);
        if roomy >= self.compact_from {
            slots(COMPACT_EIGHTHS_PER_KEY)
        } else {
            roomy
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the count, a freshly moved table has room for the next key
    /// without moving again, and a table never fills up.
    #[test]
    // Arithmetic only, millions of steps: too slow interpreted, and nothing
    // here for Miri to check.
    #[cfg_attr(miri, ignore)]
    fn a_moved_table_takes_the_next_key_and_never_fills() {
        // Past the default's switch to compact tables, and back.
        let keys = (1..2_000).chain(5_300..5_600);
        for fill in [TableFill::DEFAULT, TableFill::COMPACT] {
            for keys in keys.clone() {
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

    /// The default keeps small tables roomy and large ones compact; the
    /// compact setting keeps every table compact.
    #[test]
    fn the_default_turns_compact_at_the_large_table_size() {
        assert_eq!(TableFill::DEFAULT.capacity_for(1_000), 3_001);
        assert_eq!(TableFill::COMPACT.capacity_for(1_000), 2_001);
        assert_eq!(TableFill::DEFAULT.capacity_for(10_000), 20_001);
        let small = LARGE_TABLE_SLOTS - 1;
        assert!(TableFill::DEFAULT.too_full(small * 5 / 8 + 1, small));
        assert!(!TableFill::COMPACT.too_full(small * 5 / 8 + 1, small));
        let large = LARGE_TABLE_SLOTS;
        assert!(!TableFill::DEFAULT.too_full(large * 7 / 8, large));
        assert!(TableFill::DEFAULT.too_full(large * 7 / 8 + 1, large));
    }

    /// Past eight shards the switch moves down in proportion, so a store's
    /// tables turn compact at the same total size; up to eight it stays.
    #[test]
    fn more_shards_turn_compact_at_smaller_tables() {
        for shards in [1, 2, 8] {
            assert_eq!(TableFill::DEFAULT.for_shards(shards), TableFill::DEFAULT);
        }
        let of_64 = TableFill::DEFAULT.for_shards(64);
        let slots = LARGE_TABLE_SLOTS / 8;
        assert!(of_64.too_full(slots * 7 / 8 + 1, slots));
        assert!(!of_64.too_full(slots * 7 / 8, slots));
        assert!(TableFill::DEFAULT.too_full(slots * 5 / 8 + 1, slots));
        // A 64-shard store's share of 10,000 keys stays roomy; of 100,000
        // it is built compact.
        assert_eq!(of_64.capacity_for(156), 469);
        assert_eq!(of_64.capacity_for(1_562), 3_125);
        assert_eq!(TableFill::COMPACT.for_shards(64), TableFill::COMPACT);
    }
}
