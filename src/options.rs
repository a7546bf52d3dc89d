//! [`KeyedOptions`]: how a keyed limiter bounds the keys it tracks.

use crate::table_fill::TableFill;

/// Memory settings for a [`KeyedLimiter`](crate::KeyedLimiter).
///
/// ```
/// use tollgate::{KeyedOptions, ManualClock, Quota, TokenBucket};
///
/// let options = KeyedOptions::new().max_keys(100_000).shards(64);
/// let limiter: TokenBucket<u64, _> =
///     TokenBucket::with_options(Quota::per_second(10), ManualClock::new(), options);
/// # let _ = limiter;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyedOptions {
    pub(crate) max_keys: Option<usize>,
    pub(crate) auto_sweep: bool,
    pub(crate) min_sweep_interval: usize,
    pub(crate) sweep_grace_nanos: Option<u64>,
    pub(crate) shards: Option<usize>,
    pub(crate) table_fill: TableFill,
    pub(crate) robust_hash: bool,
}

impl Default for KeyedOptions {
    fn default() -> Self {
        KeyedOptions {
            max_keys: None,
            auto_sweep: true,
            min_sweep_interval: 1024,
            sweep_grace_nanos: None,
            shards: None,
            table_fill: TableFill::DEFAULT,
            robust_hash: false,
        }
    }
}

impl KeyedOptions {
    /// No cap, automatic sweep on, default shard count.
    pub fn new() -> Self {
        Self::default()
    }

    /// Never track more than `max` keys at once.
    ///
    /// When the cap is reached, a new key first triggers a sweep of idle
    /// keys (at most once per `max / 8` refused keys, so a flood of new keys
    /// costs amortised O(1) each). If no room frees up, the new key's request
    /// is rejected: the cap never weakens a limit, it trades availability for
    /// new keys against bounded memory. A cap of 0 is treated as 1.
    pub fn max_keys(mut self, max: usize) -> Self {
        self.max_keys = Some(max.max(1));
        self
    }

    /// Whether inserting new keys sweeps idle ones now and then (default on).
    ///
    /// A sweep runs after as many insertions as there were keys left by the
    /// previous sweep (and at least [`min_sweep_interval`](Self::min_sweep_interval)),
    /// so its O(keys) cost is amortised O(1) per insertion and the map holds
    /// at most about twice the keys still in use (busy, or fresh for less
    /// than the [`sweep_grace`](Self::sweep_grace)), plus the interval. No
    /// background thread is involved; existing keys never pay for it.
    pub fn auto_sweep(mut self, enabled: bool) -> Self {
        self.auto_sweep = enabled;
        self
    }

    /// The fewest insertions between two automatic sweeps (default 1024).
    pub fn min_sweep_interval(mut self, insertions: usize) -> Self {
        self.min_sweep_interval = insertions.max(1);
        self
    }

    /// How long a key must have been fresh before the automatic sweep drops
    /// it (default: the time a busy key takes to return to fresh, e.g. the
    /// bucket's refill time or the window).
    ///
    /// Dropping a fresh key never changes a decision, but a client that
    /// stays under its limit is fresh again between most of its requests;
    /// evicting it each time would turn its every request into an insertion.
    /// The grace keeps such clients tracked and drops the ones that left.
    /// [`KeyedLimiter::evict_idle`](crate::KeyedLimiter::evict_idle) and the
    /// sweep made for room at the key cap ignore the grace.
    pub fn sweep_grace(mut self, grace: std::time::Duration) -> Self {
        self.sweep_grace_nanos = Some(crate::clock::duration_to_nanos(grace));
        self
    }

    /// The number of map shards (rounded up to a power of two, 1 to 65536);
    /// the default is four per CPU.
    pub fn shards(mut self, shards: usize) -> Self {
        self.shards = Some(shards);
        self
    }

    /// Keep every key table a half to seven eighths full (default off).
    ///
    /// By default a shard's table is kept a third to five eighths full
    /// while it has fewer than 16,384 slots (about 5,400 keys; with more
    /// than 8 shards, proportionally fewer, so that all the tables turn
    /// together once they hold 131,072 slots), and a half
    /// to seven eighths from then on: fuller tables cost a lookup little
    /// time of its own (lookups read eight slots' tags at once), but two
    /// threads on 10,000 shared keys over 8 shards made about 4 % fewer
    /// decisions with them on the machine in `docs/benchmarks.md`, while on
    /// 100,000 keys they were as fast on one thread and faster on two.
    /// This setting applies the fuller thresholds to small tables too:
    /// about half the memory per tracked key there (19 to 34 bytes per
    /// `u64` key instead of 27 to 51, 37 to 66 per 15-byte `String` key
    /// instead of 53 to 99).
    pub fn compact_tables(mut self, compact: bool) -> Self {
        self.table_fill = if compact {
            TableFill::COMPACT
        } else {
            TableFill::DEFAULT
        };
        self
    }

    /// Fold every key's hash once more from the start (default off).
    ///
    /// A key is hashed with foldhash's fast variant under seeds each
    /// limiter draws at random. For keys that differ only in their last
    /// few bytes (`client-00001234`, `user:42`, sequential ids, addresses
    /// in one subnet), how evenly that hash spreads them over the
    /// limiter's tables depends on the draw: most limiters spread them as
    /// well as a random function would or better, but about one in a
    /// hundred leaves a fifth or more of its keys outside their first
    /// place. So each limiter watches where its keys land: when a table
    /// moves, or a key goes in, with too many outside their first place,
    /// it folds every hash once more, by a seed of its own (as foldhash's
    /// quality variant finishes, by a constant), in all its tables, and
    /// spreads the keys as a random function would from then on. A limiter
    /// that never needs the fold never pays for it.
    ///
    /// This setting folds from the first key, for limiters that must
    /// spread any keys alike in every process, also keys that crowd only
    /// mildly. It also picks each key's shard by the folded hash: by the
    /// hash as it is, one to seven limiters in 300 (by kind of key) split
    /// such keys unevenly over their shards, up to a third more keys in
    /// some, whose tables then grow early and hold more memory per key.
    /// The cost is the fold's multiply on every lookup, made before the
    /// shard is known (the table then places by the same folded hash):
    /// about 5 % of a `String` hit and 8 % of a `u64` hit on an AMD EPYC
    /// Zen 5 machine (`docs/benchmarks.md`, levers).
    pub fn robust_hash(mut self, robust: bool) -> Self {
        self.robust_hash = robust;
        self
    }
}
