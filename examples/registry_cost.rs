//! What a registry call costs next to a call on its tier's limiter alone,
//! and next to a registry whose assignments sit behind a `RwLock`: three
//! contenders taking turns on 10,000 `String` clients.
//!
//! ```text
//! cargo run --release --example registry_cost              # every client on the default tier
//! cargo run --release --example registry_cost -- assigned  # every client assigned to the other tier
//! cargo run --release --example registry_cost -- mixed     # every client assigned, half to each tier
//! ```
//!
//! For one and two threads, each contender gets nine turns of 150 ms, in
//! rotation, so a change in machine load meets all three; the line printed
//! holds each one's median decisions per second and the registries' rates
//! as fractions of the limiter's. Both registries also hold 1,000 assigned
//! clients that are never asked about, so no lookup meets an empty map.
//! Every request must be admitted (the
//! quota is far larger than the run), or the run fails. `docs/benchmarks.md`
//! ("Registry") holds runs.

use std::process::ExitCode;
use std::time::Duration;

use tollgate::{RateLimiter, TokenBucket};

#[path = "../benches/support/mod.rs"]
mod support;

use support::contenders::Spec;
use support::keys::string_keys;
use support::median::median;
use support::registry_baseline::{
    DEFAULT_TIER, OTHER_TIER, locked_two_tier_registry, two_tier_registry,
};
use support::threads::{Run, run_for};

/// One contender's turn.
const TURN: Duration = Duration::from_millis(150);

/// Turns per contender and thread count.
const TURNS: usize = 9;

/// Which tier each client asked about is on.
#[derive(Clone, Copy, PartialEq)]
enum Case {
    /// Every client on the default tier.
    Default,
    /// Every client assigned to the other tier.
    Assigned,
    /// Every client assigned, alternately to each tier, so a call cannot
    /// guess its tier from the calls before it.
    Mixed,
}

impl Case {
    /// The tier index client number `i` is on (0 is the default).
    fn tier_of(self, i: usize) -> usize {
        match self {
            Case::Default => 0,
            Case::Assigned => 1,
            Case::Mixed => i % 2,
        }
    }
}

fn main() -> ExitCode {
    let case = match std::env::args().nth(1).as_deref() {
        None | Some("default") => Case::Default,
        Some("assigned") => Case::Assigned,
        Some("mixed") => Case::Mixed,
        Some(other) => {
            eprintln!("registry_cost: `{other}` is not `default`, `assigned` or `mixed`");
            return ExitCode::from(2);
        }
    };
    let tier_names = [DEFAULT_TIER, OTHER_TIER];
    let spec = Spec::DEEP_BUCKET;
    let clients = string_keys(10_000);
    let alone: TokenBucket = TokenBucket::new(spec.tollgate());
    let registry = two_tier_registry(spec);
    let locked = locked_two_tier_registry(spec);
    for (i, client) in clients.iter().enumerate() {
        let tier = case.tier_of(i);
        if case != Case::Default {
            registry
                .assign(client, tier_names[tier])
                .expect("known tier");
            locked.assign(client, tier);
        }
        // Track every client first: the turns time the hit path.
        let _ = alone.allow(client);
        let _ = registry.allow(client);
        locked.allow(client);
    }
    for (i, client) in clients.iter().enumerate() {
        let tier = tier_names[case.tier_of(i)];
        if registry.tier_of(client) != tier {
            eprintln!("registry_cost: {client} is not on {tier}");
            return ExitCode::FAILURE;
        }
    }
    println!(
        "10,000 clients, {}; median million decisions per second",
        match case {
            Case::Default => "all on the default tier",
            Case::Assigned => "all assigned",
            Case::Mixed => "all assigned, half to each tier",
        }
    );
    for threads in [1, 2] {
        let mut rates = [Vec::new(), Vec::new(), Vec::new()];
        let mut denied = 0;
        for _ in 0..TURNS {
            let runs: [Run; 3] = [
                run_for(threads, TURN, &clients, |c| alone.allow(c)),
                run_for(threads, TURN, &clients, |c| registry.allow(c)),
                run_for(threads, TURN, &clients, |c| locked.allow(c)),
            ];
            for (rate, run) in rates.iter_mut().zip(&runs) {
                rate.push(run.per_second() / 1e6);
                denied += run.decisions - run.admitted;
            }
        }
        if denied > 0 {
            eprintln!("registry_cost: {denied} requests denied under a generous quota");
            return ExitCode::FAILURE;
        }
        let [alone, ours, theirs] = rates.map(|mut turns| median(&mut turns));
        println!(
            "{threads} thread(s): limiter alone {alone:.1}, registry {ours:.1} ({:.2}), RwLock registry {theirs:.1} ({:.2})",
            ours / alone,
            theirs / alone
        );
    }
    ExitCode::SUCCESS
}
