//! Many limiters on the same keys, one after another in one process, each
//! timed against a reference limiter: how much the hash seeds each store
//! draws change its speed (`src/placement.rs`, and "The hash's spread" in
//! `docs/benchmarks/xeon-167.md`).
//!
//! ```text
//! cargo run --release --example placement_scan                      # 1,000 compact-tables limiters
//! cargo run --release --example placement_scan -- 1000 default      # the default fill
//! cargo run --release --example placement_scan -- 1000 compact robust
//! ```
//!
//! Each limiter tracks 10,000 `client-%08d` keys and is timed as its best
//! of five passes over them in a shuffled order, taking turns with a
//! reference limiter (robust hash) built first, so a slow moment of the
//! machine slows both. It prints the spread of the limiters' time ratios
//! to the reference, each over their median, then times the eight slowest
//! again three times: a limiter slow for its whole life (its seeds, its
//! memory) stays slow, one caught in a slow moment of the machine does not.

use std::process::ExitCode;

use tollgate::{KeyedOptions, MonotonicClock, RateLimiter, TokenBucket};

#[path = "../benches/support/mod.rs"]
mod support;

use support::args::count_arg;
use support::contenders::Spec;
use support::keys::string_keys;
use support::scan::{RETIMED_ROUNDS, Slowest, ratio_to_reference, shuffled_order, timed_pass};

/// Keys every limiter tracks.
const KEYS: usize = 10_000;

/// The exit for a limiter that refused a request it should have admitted.
fn refused() -> ExitCode {
    eprintln!("placement_scan: a limiter refused a key it should admit");
    ExitCode::FAILURE
}

fn main() -> ExitCode {
    let limiters = match count_arg(1, 1_000, 1 << 20) {
        Ok(count) => count as usize,
        Err(e) => {
            eprintln!("placement_scan: {e}");
            return ExitCode::from(2);
        }
    };
    let mut compact = true;
    let mut robust = false;
    for arg in std::env::args().skip(2) {
        match arg.as_str() {
            "compact" => compact = true,
            "default" => compact = false,
            "robust" => robust = true,
            other => {
                eprintln!("placement_scan: `{other}` is not compact, default or robust");
                return ExitCode::from(2);
            }
        }
    }
    let keys = string_keys(KEYS);
    let order = shuffled_order(KEYS);
    let make = |robust: bool| {
        let options = KeyedOptions::new()
            .compact_tables(compact)
            .robust_hash(robust);
        let limiter: TokenBucket =
            TokenBucket::with_options(Spec::DEEP_BUCKET.tollgate(), MonotonicClock::new(), options);
        for key in &keys {
            let _ = limiter.allow(key);
        }
        limiter
    };
    let reference = make(true);
    let time = |limiter: &TokenBucket| ratio_to_reference(limiter, &reference, &keys, &order);
    let mut ratios = Vec::with_capacity(limiters);
    let mut slowest = Slowest::new();
    for _ in 0..limiters {
        let limiter = make(robust);
        let Some(ratio) = time(&limiter) else {
            return refused();
        };
        ratios.push(ratio);
        slowest.offer(ratio, limiter);
    }
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];
    let at = |quantile: f64| ratios[((ratios.len() - 1) as f64 * quantile) as usize] / median;
    let slow = ratios.iter().filter(|&&ratio| ratio > 1.2 * median).count();
    println!(
        "{limiters} limiters, {} tables{}: median {median:.3}x the reference's time; \
         over that median: p90 {:.3}x, p99 {:.3}x, slowest {:.3}x; {slow} past 1.2x",
        if compact { "compact" } else { "default" },
        if robust { ", robust hash" } else { "" },
        at(0.9),
        at(0.99),
        at(1.0),
    );
    // Round by round, so one slow moment of the machine spans several
    // limiters' timings rather than one limiter's every round; each timing
    // after an untimed pass, since the scan has left the limiter's tables
    // out of the caches and the reference's in them.
    let mut again = vec![String::new(); slowest.kept().len()];
    for _ in 0..RETIMED_ROUNDS {
        for ((_, limiter), line) in slowest.kept().iter().zip(&mut again) {
            let warm = timed_pass(limiter, &keys, &order);
            let Some(later) = warm.and_then(|_| time(limiter)) else {
                return refused();
            };
            line.push_str(&format!(" {:.3}x", later / median));
        }
    }
    println!(
        "the {} slowest, over that median, then timed {RETIMED_ROUNDS} times again:",
        slowest.kept().len()
    );
    for ((ratio, _), line) in slowest.kept().iter().zip(&again) {
        println!("  {:.3}x, then{line}", ratio / median);
    }
    ExitCode::SUCCESS
}
