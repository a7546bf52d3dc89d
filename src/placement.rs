//! [`Placement`]: how a table turns a key's hash into its home group and
//! tag, and when a store's tables fold the hash once more.
//!
//! A lookup is cheapest when its key sits in its home group as the first
//! entry there with its tag: then one tag word and one entry answer it
//! (`Table::find_by`). A key is off that straight-line path when it went
//! to a later group, or when an earlier key in its home group has the same
//! tag; its lookups take the full probe. foldhash's fast variant spreads
//! keys that differ only in a few bytes (`client-00001234`, sequential ids,
//! addresses in one subnet) more evenly than a random function for most
//! seeds, and much less evenly for a few: one store in a hundred leaves a
//! fifth to two fifths of such keys off the path in compact tables, and
//! the worst of 300 up to four fifths (`state_map/placement_survey.rs`;
//! `docs/benchmarks/xeon-167.md`, "The hash's spread"). Folding the hash
//! once more by a seed of the store's (as foldhash's quality variant
//! finishes, by a constant) spreads every seed's keys as a random function
//! would, for one more multiply on every lookup. So a store folds only
//! once its own keys show the need, and then in every table, so that all
//! its lookups take the same branch (with some tables folding and some
//! not, the branch went each way at random and cost more than the
//! multiply; the switch leaves them mixed only until each shard has moved,
//! one per insertion):
//!
//! | when | what happens |
//! |---|---|
//! | the store was made with `robust_hash(true)` | every table folds from the start |
//! | a shard's keys move to a larger table, in a store whose tables do not fold | if more of them are off the path than twice as many as folded, plus [`SLACK`], the store switches to folding; the folded count is taken only past [`SLACK`] plus a share a random function rarely leaves right after a move ([`CHECK_ONE_IN`]) |
//! | a key lands off the path in a crowded table: [`CROWDED_FROM`] or more slots taken, more than one in [`CROWDED_ONE_IN`] of them off the path | the store switches to folding |
//! | the store switches | the switching call moves its own shard's keys to a folded table of the same size (a fold is no growth; where the shard's next key would grow it, the table that growth would build), after releasing that shard's lock; each later insertion, in any shard, moves the next shard in turn, so after one insertion per shard every table folds, and a sweep folds every shard it visits. No call pauses for more than one shard's move for it (on a Zen 3 EPYC, at most 0.8 ms at 100,000 `u64` keys in 8 shards and 9.9 ms at a million, where moving every shard in the switching call took 4.1 ms and 53 ms) |
//!
//! Roomy and compact tables ([`TableFill`](crate::table_fill::TableFill))
//! have their own shares, as a random function leaves far fewer keys off
//! the path in a roomy one.
//!
//! The shard a key belongs to is chosen from the unfolded hash, so a
//! switch moves keys only within their shard, and a lookup can fetch the
//! shard's table while the multiply runs.

/// How a table turns a key's hash into the hash it places by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Placement {
    /// The factor of the second fold; zero places by the hash as it is (a
    /// store's factor is odd, so never zero).
    fold: u64,
}

/// Keys a move may leave off the path, beyond twice what the folded hash
/// would, before the store folds: a margin for the chance differences
/// between two good hashes on a small table.
pub(crate) const SLACK: usize = 8;

/// One in this many moved keys off the path (roomy, compact), beyond
/// [`SLACK`], before a move counts what folding would do. Right after a
/// move a random function leaves about one key in 100 off the path in a
/// roomy table (a third full) and one in 40 in a compact one (half full),
/// mostly behind a key with the same tag.
pub(crate) const CHECK_ONE_IN: (usize, usize) = (64, 24);

/// Taken slots from which a table can count as crowded: in smaller tables
/// a random function's share off the path varies too much.
pub(crate) const CROWDED_FROM: usize = 256;

/// A table is crowded when more than one in this many of its taken slots
/// (roomy, compact) hold a key off the path. In simulation, filled to where
/// they move (five eighths roomy, seven eighths compact), tables placed by
/// a random function held about 5 % and 15 % of their keys off the path,
/// and no more than 9 % and 20 %; the crowding seeds, a fifth to two
/// thirds.
pub(crate) const CROWDED_ONE_IN: (usize, usize) = (8, 4);

/// The roomy or the compact figure of `pair`.
fn pick(pair: (usize, usize), compact: bool) -> usize {
    if compact { pair.1 } else { pair.0 }
}

impl Placement {
    /// Places by the hash as it is.
    pub(crate) const AS_HASHED: Placement = Placement { fold: 0 };

    /// Places by the hash folded once more by `factor` (forced odd, so it is
    /// never the "as hashed" zero).
    pub(crate) fn folded(factor: u64) -> Placement {
        Placement { fold: factor | 1 }
    }

    /// Whether this placement folds.
    pub(crate) fn folds(self) -> bool {
        self.fold != 0
    }

    /// The hash a table places `hash` by.
    #[inline(always)]
    pub(crate) fn apply(self, hash: u64) -> u64 {
        if self.fold == 0 {
            hash
        } else {
            folded_multiply(hash, self.fold)
        }
    }

    /// Whether a move that left `off_path` of `keys` keys off the path, in
    /// a roomy or `compact` table, should count what folding would do.
    pub(crate) fn worth_checking(off_path: usize, keys: usize, compact: bool) -> bool {
        off_path > SLACK.saturating_add(keys / pick(CHECK_ONE_IN, compact))
    }

    /// Whether a table placing `off_path_as_hashed` of its keys off the
    /// path as hashed, against `off_path_folded` folded, should fold.
    pub(crate) fn should_fold(off_path_as_hashed: usize, off_path_folded: usize) -> bool {
        off_path_as_hashed > off_path_folded.saturating_mul(2).saturating_add(SLACK)
    }

    /// Whether a roomy or `compact` table with `taken` slots taken,
    /// `off_path` of them off the path, is crowded.
    pub(crate) fn is_crowded(taken: usize, off_path: usize, compact: bool) -> bool {
        taken >= CROWDED_FROM && off_path.saturating_mul(pick(CROWDED_ONE_IN, compact)) > taken
    }
}

/// The 128-bit product of `x` and `y` with its halves XORed, as foldhash
/// folds: its middle bits, which depend on most bits of both, reach every
/// bit of the result.
#[inline(always)]
fn folded_multiply(x: u64, y: u64) -> u64 {
    // Two 64-bit factors: the product fits 128 bits.
    let product = u128::from(x) * u128::from(y);
    (product as u64) ^ ((product >> 64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_hashed_keeps_the_hash_and_folded_changes_it() {
        let folded = Placement::folded(0x9e37_79b9_7f4a_7c15);
        assert!(folded.folds() && !Placement::AS_HASHED.folds());
        assert_eq!(Placement::AS_HASHED.apply(12345), 12345);
        assert_ne!(folded.apply(12345), 12345);
        // An even factor is made odd, so it still folds.
        assert!(Placement::folded(0).folds());
    }

    #[test]
    fn folds_only_when_clearly_worse_than_folded() {
        assert!(!Placement::should_fold(SLACK, 0));
        assert!(Placement::should_fold(SLACK + 1, 0));
        assert!(!Placement::should_fold(2 * 50 + SLACK, 50));
        assert!(Placement::should_fold(2 * 50 + SLACK + 1, 50));
        assert!(!Placement::should_fold(usize::MAX, usize::MAX));
    }

    #[test]
    fn crowded_needs_enough_keys_and_a_large_share_off_path() {
        for compact in [false, true] {
            assert!(!Placement::is_crowded(
                CROWDED_FROM - 1,
                CROWDED_FROM - 1,
                compact
            ));
            let one_in = pick(CROWDED_ONE_IN, compact);
            let taken = one_in * 100;
            assert!(!Placement::is_crowded(taken, 100, compact));
            assert!(Placement::is_crowded(taken, 101, compact));
        }
        // The same share crowds a roomy table and not a compact one.
        assert!(Placement::is_crowded(1000, 200, false));
        assert!(!Placement::is_crowded(1000, 200, true));
    }

    #[test]
    fn a_move_checks_only_past_the_slack_and_a_rare_share() {
        assert!(!Placement::worth_checking(SLACK, 0, true));
        assert!(Placement::worth_checking(SLACK + 1, 0, true));
        for compact in [false, true] {
            let keys = pick(CHECK_ONE_IN, compact) * 10;
            assert!(!Placement::worth_checking(SLACK + 10, keys, compact));
            assert!(Placement::worth_checking(SLACK + 11, keys, compact));
        }
        // The same share is checked in a roomy table, not in a compact one.
        assert!(Placement::worth_checking(SLACK + 30, 1200, false));
        assert!(!Placement::worth_checking(SLACK + 30, 1200, true));
    }
}
