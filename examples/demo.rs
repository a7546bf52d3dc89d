//! Exercises every in-memory limiter on a manual clock and prints what each
//! decided, then a registry of tiers on the real clock.

use std::time::Duration;

use tollgate::{
    Decision, FixedWindow, ManualClock, Quota, RateLimiter, Registry, SlidingWindowCounter,
    SlidingWindowLog, TokenBucket,
};

fn show(name: &str, at: Duration, key: &str, cost: u64, decision: &Decision) {
    println!(
        "{name:<22} t={:>5}ms key={key:<6} cost={cost} allowed={:<5} remaining={} retry_after={:?} reset_after={:?}",
        at.as_millis(),
        decision.allowed(),
        decision.remaining(),
        decision.retry_after(),
        decision.reset_after(),
    );
}

fn run(name: &str, limiter: &dyn RateLimiter<str>, clock: &ManualClock) {
    let steps: [(u64, &str, u64); 8] = [
        (0, "alice", 1),
        (0, "alice", 1),
        (0, "alice", 1),
        (0, "bob", 2),
        (400, "alice", 1),
        (600, "alice", 0),
        (1000, "alice", 2),
        (1500, "bob", 1),
    ];
    for (at_ms, key, cost) in steps {
        clock.set(Duration::from_millis(at_ms));
        match limiter.check_n(key, cost) {
            Ok(decision) => show(name, clock.elapsed(), key, cost, &decision),
            Err(error) => println!("{name:<22} key={key} cost={cost} error: {error}"),
        }
    }
    if let Err(error) = limiter.check_n("alice", 3) {
        println!("{name:<22} cost=3 error: {error}");
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let quota: Quota = "2/s".parse()?;
    println!("quota: {quota}");

    let clock = ManualClock::new();
    run(
        "TokenBucket",
        &TokenBucket::<String, _>::with_clock(quota, clock.clone()),
        &clock,
    );
    let clock = ManualClock::new();
    run(
        "FixedWindow",
        &FixedWindow::<String, _>::with_clock(quota, clock.clone()),
        &clock,
    );
    let clock = ManualClock::new();
    run(
        "SlidingWindowLog",
        &SlidingWindowLog::<String, _>::with_clock(quota, clock.clone()),
        &clock,
    );
    let clock = ManualClock::new();
    run(
        "SlidingWindowCounter",
        &SlidingWindowCounter::<String, _>::with_clock(quota, clock.clone()),
        &clock,
    );

    let registry = Registry::builder()
        .tier("free", TokenBucket::<String>::new("3/minute".parse()?))
        .tier("pro", TokenBucket::<String>::new("1000/minute".parse()?))
        .default_tier("free")
        .build()?;
    registry.assign("acme", "pro")?;
    for client in ["guest", "acme"] {
        let admitted = (0..10).filter(|_| registry.allow(client)).count();
        println!(
            "registry: {client:<5} tier={:<4} admitted {admitted} of 10",
            registry.tier_of(client)
        );
    }
    Ok(())
}
