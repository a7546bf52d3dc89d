//! `Registry::assign` racing requests for the same client: each call must
//! be judged by exactly one tier, the old or the new, and charged there.
//! And an assignment nobody changes is never lost to a lookup racing the
//! move of its table.
#![cfg(tollgate_loom)]

use loom::sync::Arc;
use loom::thread;
use tollgate::{FixedWindow, Quota, Registry};
use tollgate_loom_tests::reference::Pool;
use tollgate_loom_tests::serial::{Event, Timing, assert_explained, observe};
use tollgate_loom_tests::{Bound, RecordingClock, explore};

const CLIENT: &str = "acme";
const FREE: u64 = 1;
const PRO: u64 = 3;

#[test]
fn assign_races_allow() {
    explore(Bound::Exhaustive, || {
        let registry = Arc::new(two_tiers());
        let assigner = {
            let registry = Arc::clone(&registry);
            thread::spawn(move || registry.assign(CLIENT, "pro").expect("known tier"))
        };
        let requests = {
            let registry = Arc::clone(&registry);
            thread::spawn(move || {
                vec![
                    observe(&*registry, CLIENT, 1),
                    observe(&*registry, CLIENT, 1),
                ]
            })
        };
        assigner.join().expect("assigning thread panicked");
        let calls = requests.join().expect("requesting thread panicked");

        // The decision's limit names the tier that judged it.
        assert!(
            calls
                .iter()
                .all(|call| call.limit == FREE || call.limit == PRO),
            "model violation: a call judged by no tier: {calls:?}"
        );
        assert!(
            !(calls[0].limit == PRO && calls[1].limit == FREE),
            "model violation: the client went back to its old tier: {calls:?}"
        );
        assert_eq!(
            registry.tier_of(CLIENT),
            "pro",
            "model violation: lost assignment"
        );
        for (tier, limit) in [("free", FREE), ("pro", PRO)] {
            let limiter = registry.tier(tier).expect("known tier");
            let last = observe(limiter, CLIENT, 0);
            let judged: Vec<Event> = calls
                .iter()
                .copied()
                .filter(|call| call.limit == limit)
                .collect();
            // Each tier saw exactly its calls, in order, and was charged for
            // them alone.
            assert_explained(
                &Pool { capacity: limit },
                &[],
                &[judged],
                &[last],
                Timing::AsRead,
            );
        }
    });
}

/// Both tiers on one clock; `free` is the default.
fn two_tiers() -> Registry {
    let clock = RecordingClock::default();
    Registry::builder()
        .tier(
            "free",
            FixedWindow::<String, _>::with_clock(Quota::per_minute(FREE), clock.clone()),
        )
        .tier(
            "pro",
            FixedWindow::<String, _>::with_clock(Quota::per_minute(PRO), clock),
        )
        .default_tier("free")
        .build()
        .expect("valid tiers")
}

#[test]
fn a_table_move_never_hides_an_assignment() {
    explore(Bound::Exhaustive, || {
        let registry = Arc::new(two_tiers());
        registry.assign(CLIENT, "pro").expect("known tier");
        let lookup = {
            let registry = Arc::clone(&registry);
            thread::spawn(move || {
                [
                    registry.tier_of(CLIENT).to_owned(),
                    registry.tier_of(CLIENT).to_owned(),
                ]
            })
        };
        // A second client fills the two-slot table under loom, so its
        // assignment moves the table, retiring "acme"'s word in the old
        // one while the lookup may be reading it.
        registry.assign("other", "free").expect("known tier");
        let tiers = lookup.join().expect("looking-up thread panicked");
        assert_eq!(
            tiers,
            ["pro", "pro"],
            "model violation: an untouched assignment was lost"
        );
        assert_eq!(registry.assigned_clients(), 2);
    });
}

#[test]
fn a_removal_racing_a_lookup_gives_one_tier_or_the_other() {
    explore(Bound::Exhaustive, || {
        let registry = Arc::new(two_tiers());
        registry.assign(CLIENT, "pro").expect("known tier");
        registry.assign("other", "pro").expect("known tier");
        let remover = {
            let registry = Arc::clone(&registry);
            thread::spawn(move || {
                assert!(registry.unassign(CLIENT));
                registry.tier_of(CLIENT).to_owned()
            })
        };
        let tiers = [
            registry.tier_of(CLIENT).to_owned(),
            registry.tier_of("other").to_owned(),
        ];
        assert_eq!(remover.join().expect("removing thread panicked"), "free");
        assert!(
            tiers[0] == "pro" || tiers[0] == "free",
            "model violation: {tiers:?}"
        );
        assert_eq!(
            tiers[1], "pro",
            "model violation: a bystander lost its tier"
        );
        assert_eq!(registry.assigned_clients(), 1);
    });
}
