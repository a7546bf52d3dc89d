//! tollgate, governor keyed and the keyed floor on the same `String` keys,
//! timed in turns: the set the examples that watch the machine's speed
//! compare, so that a change in the machine meets all three alike.

use tollgate::{MonotonicClock, RateLimiter, TokenBucket};

use super::batch::batch;
use super::contenders::{GovernorKeyed, Spec, governor_keyed};
use super::keyed_floor::KeyedFloor;
use super::keys::{Pick, string_keys};

/// The contenders, in the order `turn` times and reports them.
pub const NAMES: [&str; 3] = [
    "tollgate TokenBucket<String>",
    "governor keyed <String>",
    "keyed floor (not a limiter)",
];

/// The three contenders and the keys they track.
pub struct StringContenders {
    names: Vec<String>,
    tollgate: TokenBucket,
    governor: GovernorKeyed<String>,
    clock: MonotonicClock,
    floor: KeyedFloor,
}

impl StringContenders {
    /// Each contender with a bucket too deep to run dry, on `keys` keys.
    pub fn new(keys: usize) -> Self {
        let spec = Spec::DEEP_BUCKET;
        let names = string_keys(keys);
        let floor = KeyedFloor::new(&names);
        StringContenders {
            tollgate: TokenBucket::new(spec.tollgate()),
            governor: governor_keyed(spec),
            clock: MonotonicClock::new(),
            floor,
            names,
        }
    }

    /// One batch of `decisions` per contender, in the order of [`NAMES`]:
    /// nanoseconds per decision, or which contender denied a request (none
    /// may: the buckets cannot run dry and the floor admits its own keys).
    pub fn turn(&self, decisions: u64, pick: &mut Pick) -> Result<[f64; 3], String> {
        let keys = self.names.len();
        let names = &self.names;
        let batches = [
            batch(keys, decisions, pick, |i| self.tollgate.allow(&names[i])),
            batch(keys, decisions, pick, |i| {
                self.governor.check_key(&names[i]).is_ok()
            }),
            batch(keys, decisions, pick, |i| {
                self.floor.allow(&self.clock, &names[i])
            }),
        ];
        let mut times = [0.0; 3];
        for (c, (ns, admitted)) in batches.into_iter().enumerate() {
            if admitted != decisions {
                return Err(format!("{} admitted {admitted} of {decisions}", NAMES[c]));
            }
            times[c] = ns;
        }
        Ok(times)
    }
}
