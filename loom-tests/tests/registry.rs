//! `Registry::assign` racing requests for the same client: each call must
//! be judged by exactly one tier, the old or the new, and charged there.
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
        let clock = RecordingClock::default();
        let registry = Arc::new(
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
                .expect("valid tiers"),
        );
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
