//! The store's key cap and automatic sweep, through the real `KeyedLimiter`.
//!
//! * The cap: threads inserting new keys at once never get more keys
//!   tracked than the cap, a key refused at the cap is rejected with nothing
//!   remaining, and the slot count never leaks.
//! * The automatic sweep, run by one thread's insertion, racing requests on
//!   the key it evicts: no extra unit passes and none is lost.
//! * The sweep the cap makes for room, racing a request on the key it
//!   evicts: exactly one of the two contenders gets the slot.
//!
//! Every model ends by checking the slot count: with every state fresh,
//! `evict_idle` empties the map, after which exactly `cap` new keys fit.
#![cfg(tollgate_loom)]

use std::time::Duration;

use loom::sync::Arc;
use loom::thread;
use tollgate::{KeyedLimiter, KeyedOptions, Quota, TokenBucketRule};
use tollgate_loom_tests::reference::{Bucket, Pool};
use tollgate_loom_tests::scenarios::assert_well_formed;
use tollgate_loom_tests::serial::{Event, Timing, admitted_units, assert_explained, observe};
use tollgate_loom_tests::{Bound, RecordingClock, explore};

const SECOND: u64 = 1_000_000_000;

type Limiter = KeyedLimiter<TokenBucketRule, String, RecordingClock>;

fn limiter(per_second: u64, clock: &RecordingClock, options: KeyedOptions) -> Arc<Limiter> {
    Arc::new(KeyedLimiter::with_options(
        Quota::per_second(per_second),
        clock.clone(),
        options,
    ))
}

/// One thread per entry of `keys`, each spending one unit on its key.
fn spend_on(limiter: &Arc<Limiter>, keys: &[&'static str]) -> Vec<Event> {
    let handles: Vec<_> = keys
        .iter()
        .map(|&key| {
            let limiter = Arc::clone(limiter);
            thread::spawn(move || observe(&*limiter, key, 1))
        })
        .collect();
    handles
        .into_iter()
        .map(|handle| handle.join().expect("spending thread panicked"))
        .collect()
}

/// A request refused at the cap: rejected with nothing remaining.
fn assert_refused_at_cap(event: &Event) {
    assert!(
        !event.answer.allowed && event.answer.remaining == 0,
        "model violation: a key refused at the cap got {event:?}"
    );
}

/// The slot count matches the map: at `later`, when every state is fresh,
/// `evict_idle` removes every tracked key, and then exactly `cap` new keys
/// are admitted and the next is refused at the cap.
fn assert_slots_recovered(limiter: &Limiter, clock: &RecordingClock, later: Duration, cap: usize) {
    clock.set(later);
    let tracked = limiter.len();
    let evicted = limiter.evict_idle();
    assert!(
        evicted == tracked && limiter.is_empty(),
        "model violation: {tracked} fresh keys tracked, {evicted} evicted, {} left",
        limiter.len()
    );
    const NEW_KEYS: [&str; 4] = ["new-0", "new-1", "new-2", "new-3"];
    for key in &NEW_KEYS[..cap] {
        let event = observe(limiter, *key, 1);
        assert!(
            event.answer.allowed,
            "model violation: with an empty map, {key} was refused under a cap of {cap}: \
             the slot count leaked"
        );
    }
    let past = observe(limiter, NEW_KEYS[cap], 1);
    assert_refused_at_cap(&past);
    assert_eq!(
        limiter.len(),
        cap,
        "model violation: the map holds other than the cap"
    );
}

/// Three threads insert three new keys under a cap of two, time frozen:
/// nothing is idle, so exactly two keys get a slot (never more: the cap;
/// never fewer: a failed reservation is given back) and the third is
/// refused at the cap.
#[test]
fn cap_admits_exactly_its_keys_from_racing_inserts() {
    explore(Bound::Preemptions(3), || {
        let clock = RecordingClock::default();
        let options = KeyedOptions::new().max_keys(2).auto_sweep(false);
        let limiter = limiter(2, &clock, options);
        let events = spend_on(&limiter, &["a", "b", "c"]);

        assert_well_formed(2, &events);
        let admitted = admitted_units(&events);
        assert!(
            admitted == 2 && limiter.len() == 2,
            "model violation: {admitted} new keys admitted, {} tracked, under a cap of 2: \
             {events:?}",
            limiter.len()
        );
        for event in &events {
            if event.answer.allowed {
                // A fresh key of two units, one spent.
                assert_eq!(event.answer.remaining, 1, "model violation: {event:?}");
            } else {
                assert_refused_at_cap(event);
            }
        }
        assert_slots_recovered(&limiter, &clock, Duration::from_secs(1), 2);
    });
}

/// Two threads insert the same new key while a third inserts another,
/// under a cap of two, time frozen.
///
/// Both requests for the shared key may miss it and reserve a slot each
/// before either inserts it; the second gives its slot back once it finds
/// the key inserted. Until then the other key may be refused although the
/// cap ends up half used: a conservative refusal, never an extra key.
#[test]
fn cap_with_two_requests_for_one_new_key() {
    explore(Bound::Preemptions(3), || {
        let clock = RecordingClock::default();
        let options = KeyedOptions::new().max_keys(2).auto_sweep(false);
        let limiter = limiter(2, &clock, options);
        let events = spend_on(&limiter, &["shared", "shared", "other"]);
        let shared = [events[0], events[1]];
        let other = events[2];

        assert_well_formed(2, &events);
        let tracked = limiter.len();
        let keys_admitted = usize::from(shared.iter().any(|e| e.answer.allowed))
            + usize::from(other.answer.allowed);
        assert!(
            tracked <= 2 && tracked == keys_admitted,
            "model violation: {tracked} keys tracked, {keys_admitted} admitted: {events:?}"
        );
        // Two units, two requests: a refusal on either key is the cap's.
        for event in events.iter().filter(|e| !e.answer.allowed) {
            assert_refused_at_cap(event);
        }
        // The other key is refused only while both shared requests hold a
        // slot, and each of those then runs on the shared key.
        if !other.answer.allowed {
            assert!(
                shared.iter().all(|e| e.answer.allowed),
                "model violation: the cap refused {other:?} with a slot free: {events:?}"
            );
        }
        // The shared key's admitted requests: some serial order of them on
        // a two-unit pool, ending with its current state.
        let admitted_shared: Vec<Vec<Event>> = shared
            .iter()
            .filter(|e| e.answer.allowed)
            .map(|e| vec![*e])
            .collect();
        let last = observe(&*limiter, "shared", 0);
        assert_explained(
            &Pool { capacity: 2 },
            &[],
            &admitted_shared,
            &[last],
            Timing::AsRead,
        );
        assert_slots_recovered(&limiter, &clock, Duration::from_secs(1), 2);
    });
}

/// The automatic sweep after every insertion, with no grace: the key is
/// spent at 0; one thread moves the clock to 1 s (the key becomes fresh) and
/// inserts another key, whose insertion sweeps; a second thread spends on
/// the first key twice. The cap of three never binds; it is there so the
/// slot count can be checked afterwards.
///
/// Checks, as the eviction models do: at most two units on the key (the
/// burst and the one refilled by 1 s); some serial order explains its
/// decisions, each judged at its reading or at the sweep's (a request that
/// misses a key the sweep removed is judged as of the sweep); the inserting
/// thread's new key is admitted; and the map and the slot count agree.
#[test]
fn auto_sweep_on_an_insertion_races_spending() {
    explore(Bound::Preemptions(4), || {
        let clock = RecordingClock::default();
        let options = KeyedOptions::new()
            .max_keys(3)
            .min_sweep_interval(1)
            .sweep_grace(Duration::ZERO);
        let limiter = limiter(1, &clock, options);
        let before = observe(&*limiter, "busy", 1);

        let inserter = {
            let limiter = Arc::clone(&limiter);
            let clock = clock.clone();
            thread::spawn(move || {
                clock.set(Duration::from_secs(1));
                observe(&*limiter, "newcomer", 1)
            })
        };
        let spender = {
            let limiter = Arc::clone(&limiter);
            thread::spawn(move || {
                vec![observe(&*limiter, "busy", 1), observe(&*limiter, "busy", 1)]
            })
        };
        let newcomer = inserter.join().expect("inserting thread panicked");
        let threads = vec![spender.join().expect("spending thread panicked")];
        let last = observe(&*limiter, "busy", 0);

        assert!(
            before.answer.allowed && newcomer.answer.allowed,
            "model violation: a new key was refused below the cap: {before:?} {newcomer:?}"
        );
        let events: Vec<Event> = threads.iter().flatten().copied().collect();
        assert_well_formed(1, &events);
        let admitted = admitted_units(std::iter::once(&before).chain(&events));
        assert!(
            admitted <= 2,
            "model violation: {admitted} units admitted where 2 are allowed: {threads:?}"
        );
        let reference = Bucket {
            capacity: 1,
            interval: SECOND,
        };
        assert_explained(
            &reference,
            &[before],
            &threads,
            &[last],
            Timing::NoEarlierThan(&[0, SECOND]),
        );
        // Spent at 1 s, the newcomer is not idle yet; the busy key is
        // tracked unless the sweep took it and nobody spent on it since.
        let tracked = limiter.len();
        assert!(
            (1..=2).contains(&tracked),
            "model violation: {tracked} keys tracked after the race"
        );
        assert_slots_recovered(&limiter, &clock, Duration::from_secs(10), 3);
    });
}

/// The cap's sweep for room: the cap is one and the key is spent at 0; one
/// thread moves the clock to 1 s (the key becomes fresh) and asks for a new
/// key, which sweeps for room; a second thread spends on the first key.
///
/// Serially, either the spend comes first (at 0 it is refused and the new
/// key takes the swept slot; at 1 s it passes, nothing is idle and the new
/// key is refused at the cap) or the new key comes first (the old key is
/// swept, and its request then finds the cap full). So exactly one of the
/// two requests passes, the one tracked key is its key, and a refusal of the
/// new key is the cap's.
#[test]
fn cap_sweep_for_room_races_spending() {
    explore(Bound::Exhaustive, || {
        let clock = RecordingClock::default();
        let options = KeyedOptions::new().max_keys(1).auto_sweep(false);
        let limiter = limiter(1, &clock, options);
        let before = observe(&*limiter, "old", 1);

        let inserter = {
            let limiter = Arc::clone(&limiter);
            let clock = clock.clone();
            thread::spawn(move || {
                clock.set(Duration::from_secs(1));
                observe(&*limiter, "new", 1)
            })
        };
        let spender = {
            let limiter = Arc::clone(&limiter);
            thread::spawn(move || observe(&*limiter, "old", 1))
        };
        let new = inserter.join().expect("inserting thread panicked");
        let old = spender.join().expect("spending thread panicked");

        assert!(before.answer.allowed, "model violation: {before:?}");
        assert_well_formed(1, &[before, new, old]);
        assert!(
            new.answer.allowed != old.answer.allowed,
            "model violation: one slot, but {} of the two requests passed: new {new:?}, old {old:?}",
            usize::from(new.answer.allowed) + usize::from(old.answer.allowed)
        );
        assert_eq!(limiter.len(), 1, "model violation: the cap is one key");
        let winner = if new.answer.allowed { "new" } else { "old" };
        // Spent at 1 s, the winner has nothing left; a fresh key would.
        let peek = observe(&*limiter, winner, 0);
        assert_eq!(
            peek.answer.remaining, 0,
            "model violation: {winner} passed but is not the tracked key"
        );
        if !new.answer.allowed {
            assert_refused_at_cap(&new);
        }
        assert_slots_recovered(&limiter, &clock, Duration::from_secs(10), 1);
    });
}
