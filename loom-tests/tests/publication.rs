//! A new key's entry published to a lookup without a lock, through the real
//! `KeyedLimiter`.
//!
//! Two threads bring the same new key at once. Under `--cfg tollgate_loom` a
//! lookup clones the shard's table under the lock and searches it after
//! releasing it, so one thread's lock-free search can run while the other
//! writes the entry into that very table. The decisions must add up (both
//! units admitted, none left, one key tracked), and `loom` checks every read
//! of an entry against its write in the interleavings it explores.
//!
//! What this model does not prove: with the tag word's release store
//! weakened to relaxed it still passes. Its first schedule runs one thread's
//! lookup before the other writes, and the writer's own load of the tag
//! word then hides that lookup from `loom`'s search. `table_publication.rs`
//! models the table itself with the roles ordered so the first schedule runs
//! the write first, and fails on that weakening (see
//! `docs/verification.md`).
#![cfg(tollgate_loom)]

use std::time::Duration;

use loom::sync::Arc;
use loom::thread;
use tollgate::{KeyedLimiter, Quota, TokenBucketRule};
use tollgate_loom_tests::serial::observe;
use tollgate_loom_tests::{Bound, RecordingClock, explore};

const NEW_KEY: &str = "newcomer";

#[test]
fn a_new_key_is_published_whole_to_a_lookup_without_the_lock() {
    explore(Bound::Exhaustive, || {
        let clock = RecordingClock::at(Duration::from_millis(250));
        let limiter = Arc::new(KeyedLimiter::<TokenBucketRule, String, _>::with_clock(
            Quota::per_second(2),
            clock,
        ));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let limiter = Arc::clone(&limiter);
                thread::spawn(move || observe(&*limiter, NEW_KEY, 1))
            })
            .collect();
        for handle in handles {
            let event = handle.join().expect("requesting thread panicked");
            assert!(
                event.answer.allowed,
                "model violation: a unit under the limit was refused: {event:?}"
            );
        }
        let last = observe(&*limiter, NEW_KEY, 0);
        assert_eq!(
            last.answer.remaining, 0,
            "model violation: both units admitted, yet {last:?}"
        );
        assert_eq!(
            limiter.len(),
            1,
            "model violation: the key is tracked twice"
        );
    });
}
