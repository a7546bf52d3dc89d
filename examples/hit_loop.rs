//! One thread, nothing but hits on 10,000 tracked keys in a plain loop:
//! the shape to put under a sampling profiler, with the keyed floor as the
//! reference that has no tag word and no per-thread table.
//!
//! ```text
//! cargo run --release --example hit_loop                    # String keys, 50 M hits
//! cargo run --release --example hit_loop -- u64 20000000
//! cargo run --release --example hit_loop -- string-robust    # KeyedOptions::robust_hash
//! perf record -e cpu-clock target/release/examples/hit_loop floor
//! ```
//!
//! It prints the nanoseconds per decision of the whole loop, key choice
//! included. `docs/benchmarks.md` (the Zen 4 section, current code) holds
//! a profile taken with it.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use tollgate::{KeyedOptions, MonotonicClock, RateLimiter, TokenBucket};

#[path = "../benches/support/mod.rs"]
mod support;

use support::args::count_arg;
use support::contenders::Spec;
use support::keyed_floor::KeyedFloor;
use support::keys::{Pick, string_keys, u64_keys};

/// Keys every case tracks before the loop starts.
const KEYS: usize = 10_000;

/// What the loop decides with.
#[derive(Clone, Copy)]
enum Case {
    /// `TokenBucket<String>` with its defaults.
    StringKeys,
    /// `TokenBucket<u64>` with its defaults.
    U64Keys,
    /// `TokenBucket<String>` with `KeyedOptions::robust_hash`.
    RobustStringKeys,
    /// `TokenBucket<u64>` with `KeyedOptions::robust_hash`.
    RobustU64Keys,
    /// The keyed floor on the same `String` keys (not a limiter).
    Floor,
}

impl Case {
    fn parse(arg: Option<&str>) -> Result<Case, String> {
        match arg {
            None | Some("string") => Ok(Case::StringKeys),
            Some("u64") => Ok(Case::U64Keys),
            Some("string-robust") => Ok(Case::RobustStringKeys),
            Some("u64-robust") => Ok(Case::RobustU64Keys),
            Some("floor") => Ok(Case::Floor),
            Some(other) => Err(format!(
                "`{other}` is not a case (string, u64, string-robust, u64-robust or floor)"
            )),
        }
    }
}

/// Runs `hits` decisions on keys picked at random, after one untimed pass
/// per key, and returns the nanoseconds per decision and the admitted count.
fn time<K>(keys: &[K], hits: u64, allow: impl Fn(&K) -> bool) -> (f64, u64) {
    let mut pick = Pick::new(0x5eed);
    for key in keys {
        allow(key);
    }
    let mut admitted = 0;
    let began = Instant::now();
    for _ in 0..hits {
        admitted += u64::from(allow(black_box(&keys[pick.below(keys.len())])));
    }
    (began.elapsed().as_nanos() as f64 / hits as f64, admitted)
}

fn main() -> ExitCode {
    let case = Case::parse(std::env::args().nth(1).as_deref());
    let (case, hits) = match (case, count_arg(2, 50_000_000, 1 << 40)) {
        (Ok(case), Ok(hits)) => (case, hits),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!(
                "hit_loop: {e} (arguments: string, u64, string-robust, u64-robust or floor, then a hit count)"
            );
            return ExitCode::from(2);
        }
    };
    let spec = Spec::DEEP_BUCKET;
    let robust = KeyedOptions::new().robust_hash(true);
    let (name, (ns, admitted)) = match case {
        Case::StringKeys => {
            let keys = string_keys(KEYS);
            let limiter: TokenBucket = TokenBucket::new(spec.tollgate());
            (
                "tollgate TokenBucket<String>",
                time(&keys, hits, |k| limiter.allow(k)),
            )
        }
        Case::U64Keys => {
            let keys = u64_keys(KEYS);
            let limiter: TokenBucket<u64> = TokenBucket::new(spec.tollgate());
            (
                "tollgate TokenBucket<u64>",
                time(&keys, hits, |k| limiter.allow(k)),
            )
        }
        Case::RobustStringKeys => {
            let keys = string_keys(KEYS);
            let limiter: TokenBucket =
                TokenBucket::with_options(spec.tollgate(), MonotonicClock::new(), robust);
            (
                "tollgate TokenBucket<String>, robust hash",
                time(&keys, hits, |k| limiter.allow(k)),
            )
        }
        Case::RobustU64Keys => {
            let keys = u64_keys(KEYS);
            let limiter: TokenBucket<u64> =
                TokenBucket::with_options(spec.tollgate(), MonotonicClock::new(), robust);
            (
                "tollgate TokenBucket<u64>, robust hash",
                time(&keys, hits, |k| limiter.allow(k)),
            )
        }
        Case::Floor => {
            let keys = string_keys(KEYS);
            let (clock, floor) = (MonotonicClock::new(), KeyedFloor::new(&keys));
            (
                "keyed floor, String keys",
                time(&keys, hits, |k| floor.allow(&clock, k)),
            )
        }
    };
    // A bucket of a billion tokens cannot run dry here, and the floor
    // admits every key it was built with.
    if admitted != hits {
        eprintln!("hit_loop: {name} admitted {admitted} of {hits} hits");
        return ExitCode::FAILURE;
    }
    println!("{name}: {ns:.2} ns per decision over {hits} hits on {KEYS} keys");
    ExitCode::SUCCESS
}
