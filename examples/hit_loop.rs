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
//! included. `docs/benchmarks/zen4.md` holds a profile taken with it.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use tollgate::{Key, KeyedOptions, MonotonicClock, RateLimiter, TokenBucket};

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
    /// `TokenBucket<String>` with its defaults, or with
    /// `KeyedOptions::robust_hash` when `robust`.
    StringKeys { robust: bool },
    /// `TokenBucket<u64>` likewise.
    U64Keys { robust: bool },
    /// The keyed floor on the same `String` keys (not a limiter).
    Floor,
}

/// The cases by name; the first is the default.
const CASES: [(&str, Case); 5] = [
    ("string", Case::StringKeys { robust: false }),
    ("u64", Case::U64Keys { robust: false }),
    ("string-robust", Case::StringKeys { robust: true }),
    ("u64-robust", Case::U64Keys { robust: true }),
    ("floor", Case::Floor),
];

impl Case {
    fn parse(arg: Option<&str>) -> Result<Case, String> {
        let name = arg.unwrap_or(CASES[0].0);
        CASES
            .iter()
            .find(|(known, _)| *known == name)
            .map(|&(_, case)| case)
            .ok_or_else(|| format!("`{name}` is not a case"))
    }
}

/// The arguments, for error messages.
fn usage() -> String {
    let names: Vec<&str> = CASES.iter().map(|(name, _)| *name).collect();
    format!("arguments: one of {}, then a hit count", names.join(", "))
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

/// [`time`] on a `TokenBucket<K>` with the defaults but for the hash
/// (`robust`), named for its `key_type`.
fn bucket_hits<K: Key>(
    keys: &[K],
    key_type: &str,
    robust: bool,
    hits: u64,
) -> (String, (f64, u64)) {
    let options = KeyedOptions::new().robust_hash(robust);
    let limiter: TokenBucket<K> =
        TokenBucket::with_options(Spec::DEEP_BUCKET.tollgate(), MonotonicClock::new(), options);
    let hash = if robust { ", robust hash" } else { "" };
    let name = format!("tollgate TokenBucket<{key_type}>{hash}");
    (name, time(keys, hits, |k| limiter.allow(k.borrow())))
}

fn main() -> ExitCode {
    let case = Case::parse(std::env::args().nth(1).as_deref());
    let (case, hits) = match (case, count_arg(2, 50_000_000, 1 << 40)) {
        (Ok(case), Ok(hits)) => (case, hits),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("hit_loop: {e} ({})", usage());
            return ExitCode::from(2);
        }
    };
    let (name, (ns, admitted)) = match case {
        Case::StringKeys { robust } => bucket_hits(&string_keys(KEYS), "String", robust, hits),
        Case::U64Keys { robust } => bucket_hits(&u64_keys(KEYS), "u64", robust, hits),
        Case::Floor => {
            let keys = string_keys(KEYS);
            let (clock, floor) = (MonotonicClock::new(), KeyedFloor::new(&keys));
            (
                "keyed floor, String keys".to_owned(),
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
