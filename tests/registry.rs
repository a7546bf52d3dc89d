//! The registry: tiers, assignments and building errors.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use tollgate::{
    FixedWindow, ManualClock, Quota, RateLimiter, Registry, RegistryError, TokenBucket, UnknownTier,
};

/// `free`: 2 per hour (token bucket), `pro`: 5 per hour (fixed window),
/// both on a frozen clock; `free` is the default.
fn registry() -> Registry {
    registry_hashed(false)
}

/// [`registry`] with its assignments hashed robustly or not.
fn registry_hashed(robust: bool) -> Registry {
    let clock = ManualClock::new();
    Registry::builder()
        .robust_hash(robust)
        .tier(
            "free",
            TokenBucket::<String, _>::with_clock(Quota::per_hour(2), clock.clone()),
        )
        .tier(
            "pro",
            FixedWindow::<String, _>::with_clock(Quota::per_hour(5), clock),
        )
        .default_tier("free")
        .build()
        .unwrap()
}

fn unknown(name: &str) -> UnknownTier {
    UnknownTier {
        name: name.to_owned(),
    }
}

#[test]
fn unassigned_clients_use_the_default_tier() {
    let registry = registry();
    assert_eq!(registry.default_tier(), "free");
    assert_eq!(registry.tier_of("guest"), "free");
    let d = registry.check("guest");
    assert!(d.allowed());
    assert_eq!((d.limit(), d.remaining()), (2, 1));
    assert!(registry.allow("guest"));
    assert!(!registry.allow("guest"));
    assert_eq!(registry.assigned_clients(), 0);
}

#[test]
fn assign_and_unassign_move_a_client() {
    let registry = registry();
    registry.assign("acme", "pro").unwrap();
    assert_eq!(registry.tier_of("acme"), "pro");
    assert_eq!(registry.assigned_clients(), 1);
    assert_eq!(registry.check_n("acme", 5).unwrap().limit(), 5);
    assert!(!registry.allow("acme"));
    assert!(registry.unassign("acme"));
    assert!(!registry.unassign("acme"), "nothing left to unassign");
    assert_eq!(registry.tier_of("acme"), "free");
    // Each tier keeps its own state for the client: free is still untouched.
    assert_eq!(registry.check_n("acme", 0).unwrap().remaining(), 2);
    // Reassigning returns to the state pro kept.
    registry.assign("acme", "pro").unwrap();
    assert!(!registry.allow("acme"));
    registry.assign("acme", "free").unwrap();
    assert_eq!(registry.assigned_clients(), 1);
    assert!(registry.allow("acme"));
}

#[test]
fn unknown_tiers_are_errors() {
    let registry = registry();
    assert_eq!(registry.assign("acme", "gold"), Err(unknown("gold")));
    assert_eq!(registry.tier_of("acme"), "free");
    assert_eq!(registry.tier("gold").err(), Some(unknown("gold")));
    assert!(registry.tier("pro").is_ok());
    assert!(unknown("gold").to_string().contains("gold"));
}

#[test]
fn for_client_and_tier_return_the_judging_limiter() {
    let registry = registry();
    registry.assign("acme", "pro").unwrap();
    assert_eq!(registry.for_client("acme").check("acme").limit(), 5);
    assert_eq!(registry.for_client("guest").check("guest").limit(), 2);
    // The tier's limiter is keyed by client name: what it spent is what the
    // registry sees.
    assert_eq!(registry.check_n("acme", 0).unwrap().remaining(), 4);
    assert_eq!(
        registry
            .tier("pro")
            .unwrap()
            .check_n("acme", 0)
            .unwrap()
            .remaining(),
        4
    );
    assert_eq!(
        registry
            .tier("free")
            .unwrap()
            .check_n("acme", 0)
            .unwrap()
            .remaining(),
        2
    );
}

/// Each of many tiers (more than the registry picks by branches) judges
/// exactly the clients assigned to it, and the default tier the rest.
#[test]
fn every_tier_of_many_judges_its_own_clients() {
    let names: Vec<String> = (1..=9).map(|limit| format!("tier-{limit}")).collect();
    let registry = names
        .iter()
        .zip(1..)
        .fold(Registry::builder(), |builder, (name, limit)| {
            builder.tier(name, TokenBucket::<String>::new(Quota::per_hour(limit)))
        })
        .default_tier("tier-3")
        .build()
        .unwrap();
    for (name, limit) in names.iter().zip(1..) {
        let client = format!("client-of-{name}");
        registry.assign(&client, name).unwrap();
        assert_eq!(registry.tier_of(&client), name);
        assert_eq!(
            registry
                .for_client(&client)
                .check_n(&client, 0)
                .unwrap()
                .limit(),
            limit
        );
        assert!(
            registry.allow_n(&client, limit),
            "{client} gets its tier's quota"
        );
        assert!(
            !registry.allow(&client),
            "{client} gets no more than its tier's quota"
        );
    }
    assert_eq!(
        registry
            .for_client("guest")
            .check_n("guest", 0)
            .unwrap()
            .limit(),
        3
    );
}

#[test]
fn the_registry_is_a_rate_limiter() {
    let registry: Arc<dyn RateLimiter<str>> = Arc::new(registry());
    assert!(registry.allow_n("guest", 2));
    assert!(!registry.allow("guest"));
    assert_eq!(registry.check_n("guest", 3).unwrap_err().max, 2);
    let by_ref: &dyn RateLimiter<str> = &*registry;
    assert!(!by_ref.allow("guest"));
}

#[test]
fn builder_errors() {
    let tb = || TokenBucket::<String>::new(Quota::per_second(1));
    assert_eq!(
        Registry::builder().default_tier("free").build().err(),
        Some(RegistryError::NoTiers)
    );
    assert_eq!(
        Registry::builder().tier("free", tb()).build().err(),
        Some(RegistryError::NoDefaultTier)
    );
    assert_eq!(
        Registry::builder()
            .tier("free", tb())
            .default_tier("gold")
            .build()
            .err(),
        Some(RegistryError::UnknownDefaultTier(unknown("gold")))
    );
    assert_eq!(
        Registry::builder()
            .tier("free", tb())
            .tier("free", tb())
            .default_tier("free")
            .build()
            .err(),
        Some(RegistryError::DuplicateTier {
            name: "free".to_owned()
        })
    );
    let error = RegistryError::UnknownDefaultTier(unknown("gold"));
    assert!(std::error::Error::source(&error).is_some());
    assert!(!RegistryError::NoTiers.to_string().is_empty());
}

#[test]
fn assign_racing_allow_judges_each_call_by_one_tier() {
    // Fewer under Miri, whose interpreter is slow.
    const CALLS_PER_WORKER: u64 = if cfg!(miri) { 200 } else { 20_000 };
    // Limits tell the tiers apart; both are far from exhausted, on a frozen
    // clock, so every call is admitted and spends exactly one unit of the
    // tier that judged it.
    const SMALL: u64 = 1_000_000;
    const LARGE: u64 = 3_000_000;
    let clock = ManualClock::new();
    let registry = Arc::new(
        Registry::builder()
            .tier(
                "small",
                TokenBucket::<String, _>::with_clock(Quota::per_hour(SMALL), clock.clone()),
            )
            .tier(
                "large",
                FixedWindow::<String, _>::with_clock(Quota::per_hour(LARGE), clock),
            )
            .default_tier("small")
            .build()
            .unwrap(),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let switcher = {
        let (registry, stop) = (registry.clone(), stop.clone());
        thread::spawn(move || {
            let mut flips = 0u64;
            // Relaxed: a stop flag; no data is handed over through it.
            while !stop.load(Ordering::Relaxed) {
                registry.assign("acme", "large").unwrap();
                registry.unassign("acme");
                flips += 1;
            }
            flips
        })
    };
    let workers: Vec<_> = (0..3)
        .map(|_| {
            let registry = registry.clone();
            thread::spawn(move || {
                let (mut small, mut large) = (0u64, 0u64);
                for _ in 0..CALLS_PER_WORKER {
                    let d = registry.check("acme");
                    assert!(d.allowed());
                    match d.limit() {
                        SMALL => small += 1,
                        LARGE => large += 1,
                        other => panic!("a limit of neither tier: {other}"),
                    }
                }
                (small, large)
            })
        })
        .collect();
    let (mut small, mut large) = (0, 0);
    for worker in workers {
        let (s, l) = worker.join().unwrap();
        small += s;
        large += l;
    }
    // Relaxed: join below orders everything that matters.
    stop.store(true, Ordering::Relaxed);
    assert!(switcher.join().unwrap() > 0);
    assert_eq!(small + large, 3 * CALLS_PER_WORKER);
    // What each tier spent equals the calls it was credited with.
    let spent = |tier: &str, limit: u64| {
        limit
            - registry
                .tier(tier)
                .unwrap()
                .check_n("acme", 0)
                .unwrap()
                .remaining()
    };
    assert_eq!(spent("small", SMALL), small);
    assert_eq!(spent("large", LARGE), large);
}

/// Clients arrive and leave in thousands, moving the assignments' tables,
/// with either hash: each is found in the tier it was last given.
#[test]
fn many_clients_come_and_go() {
    for robust in [false, true] {
        clients_come_and_go(&registry_hashed(robust));
    }
}

fn clients_come_and_go(registry: &Registry) {
    // Fewer under Miri, still more than the tables' first slots hold.
    let count = if cfg!(miri) { 100 } else { 5_000 };
    let clients: Vec<String> = (0..count).map(|i| format!("client-{i}")).collect();
    for round in 0..3 {
        for client in &clients {
            registry.assign(client, "pro").unwrap();
        }
        assert_eq!(registry.assigned_clients(), clients.len(), "round {round}");
        assert!(clients.iter().all(|c| registry.tier_of(c) == "pro"));
        // Every other client leaves.
        for client in clients.iter().step_by(2) {
            assert!(registry.unassign(client), "round {round}: {client}");
        }
        assert_eq!(registry.assigned_clients(), clients.len() / 2);
        for (i, client) in clients.iter().enumerate() {
            let expected = if i % 2 == 0 { "free" } else { "pro" };
            assert_eq!(registry.tier_of(client), expected, "round {round}");
        }
        for client in clients.iter().skip(1).step_by(2) {
            assert!(registry.unassign(client));
        }
        assert_eq!(registry.assigned_clients(), 0);
        assert!(clients.iter().all(|c| registry.tier_of(c) == "free"));
    }
}

/// Each client is assigned (then unassigned) by one thread and looked up by
/// another only after the change is handed over, while the assignments'
/// tables keep moving as clients arrive and leave: the reader's copy of a
/// table is often an old one, and must never hide the change.
#[test]
fn a_handed_over_change_is_seen_through_table_moves() {
    use std::sync::mpsc;
    // Fewer under Miri, still more than the tables' first slots hold, so
    // they move.
    const CLIENTS: usize = if cfg!(miri) { 400 } else { 20_000 };
    // Every `BATCH` arrivals, all but the last `STAYING` of them leave.
    const BATCH: usize = if cfg!(miri) { 50 } else { 1_000 };
    const STAYING: usize = BATCH / 5;
    let registry = Arc::new(registry());
    let (changed, seen) = mpsc::sync_channel::<(usize, &'static str)>(64);
    let reader = {
        let registry = Arc::clone(&registry);
        thread::spawn(move || {
            let mut checked = 0;
            for (client, tier) in seen {
                // The channel orders the change before this lookup.
                let name = format!("client-{client}");
                assert_eq!(registry.tier_of(&name), tier, "{name}");
                checked += 1;
            }
            checked
        })
    };
    for client in 0..CLIENTS {
        let name = format!("client-{client}");
        registry.assign(&name, "pro").unwrap();
        changed.send((client, "pro")).unwrap();
        // Clients leave in batches, so the tables also shrink and move.
        if client % BATCH == BATCH - 1 {
            for gone in client + 1 - BATCH..=client - STAYING {
                assert!(registry.unassign(&format!("client-{gone}")));
                changed.send((gone, "free")).unwrap();
            }
        }
    }
    drop(changed);
    let leaving = BATCH - STAYING;
    assert_eq!(reader.join().unwrap(), CLIENTS + CLIENTS / BATCH * leaving);
    assert_eq!(registry.assigned_clients(), CLIENTS / BATCH * STAYING);
}
