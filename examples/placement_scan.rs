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
use support::keys::{Pick, string_keys};
use support::pass::timed_pass;

/// Keys every limiter tracks.
const KEYS: usize = 10_000;

/// Timed passes per limiter, each taking turns with the reference.
const PASSES: usize = 5;

/// The slowest limiters kept and timed again at the end.
const RETIMED: usize = 8;

/// How many times each of those is timed again.
const RETIMED_ROUNDS: usize = 3;

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
    let mut order: Vec<usize> = (0..KEYS).collect();
    let mut pick = Pick::new(0x5eed);
    for i in (1..order.len()).rev() {
        order.swap(i, pick.below(i + 1));
    }
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
    let time = |limiter: &TokenBucket| -> Option<f64> {
        let (mut best, mut best_reference) = (f64::MAX, f64::MAX);
        for _ in 0..PASSES {
            best_reference = best_reference.min(timed_pass(&reference, &keys, &order)?);
            best = best.min(timed_pass(limiter, &keys, &order)?);
        }
        Some(best / best_reference)
    };
    let mut ratios = Vec::with_capacity(limiters);
    // The slowest limiters so far, kept alive to be timed again at the end:
    // a limiter slow for its life stays slow, a slow moment does not.
    let mut slowest: Vec<(f64, TokenBucket)> = Vec::with_capacity(RETIMED + 1);
    for _ in 0..limiters {
        let limiter = make(robust);
        let Some(ratio) = time(&limiter) else {
            return refused();
        };
        ratios.push(ratio);
        if slowest.len() < RETIMED || ratio > slowest[RETIMED - 1].0 {
            slowest.push((ratio, limiter));
            slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
            slowest.truncate(RETIMED);
        }
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
    let mut again = vec![String::new(); slowest.len()];
    for _ in 0..RETIMED_ROUNDS {
        for ((_, limiter), line) in slowest.iter().zip(&mut again) {
            let warm = timed_pass(limiter, &keys, &order);
            let Some(later) = warm.and_then(|_| time(limiter)) else {
                return refused();
            };
            line.push_str(&format!(" {:.3}x", later / median));
        }
    }
    println!(
        "the {} slowest, over that median, then timed {RETIMED_ROUNDS} times again:",
        slowest.len()
    );
    for ((ratio, _), line) in slowest.iter().zip(&again) {
        println!("  {:.3}x, then{line}", ratio / median);
    }
    ExitCode::SUCCESS
}
