//! A shard moving its states to a new table while requests use the old one,
//! through the real `KeyedLimiter` (under `--cfg tollgate_loom` a table has
//! two slots, so the second key of the shard makes it move).
//!
//! The key is spent once before the threads start. One thread spends on it
//! twice; another moves the table: by bringing a new key, whose insertion
//! retires every state of the old table and moves it to a new one, or by
//! switching the store to a folded hash, which moves the keys to a table
//! that places them by another hash. Whether the move lands before, between
//! or during the spends, every decision on the old key must be explained by
//! one serial order, and no unit may be lost or duplicated in the move: the
//! last peek sees exactly what was admitted.
#![cfg(tollgate_loom)]

use std::time::Duration;

use loom::sync::Arc;
use loom::thread;
use tollgate::{
    Algorithm, FixedWindowRule, KeyedLimiter, Quota, SlidingWindowCounterRule,
    SlidingWindowLogRule, TokenBucketRule,
};
use tollgate_loom_tests::reference::{Bucket, Log, SlidingCounts, Windows};
use tollgate_loom_tests::scenarios::assert_well_formed;
use tollgate_loom_tests::serial::{Reference, Timing, assert_explained, observe};
use tollgate_loom_tests::{Bound, RecordingClock, explore};

const KEY: &str = "client";
const NEW_KEY: &str = "newcomer";
const LIMIT: u64 = 2;

/// What the second thread does to move the table.
#[derive(Clone, Copy)]
enum Move {
    /// Inserts a new key into the full table.
    NewKey,
    /// Switches the store to folding its hash.
    Fold,
}

/// Explores every interleaving: with two slots per table that takes about
/// a second at most (the counts are in `docs/verification.md`).
fn move_while_spending<A, R>(reference: R, how: Move)
where
    A: Algorithm,
    R: Reference + Send + Sync + 'static,
{
    explore(Bound::Exhaustive, move || {
        // Time stands still: only the interleaving varies.
        let clock = RecordingClock::at(Duration::from_millis(250));
        let limiter = Arc::new(KeyedLimiter::<A, String, _>::with_clock(
            Quota::per_second(LIMIT),
            clock,
        ));
        let before = observe(&*limiter, KEY, 1);

        let spender = {
            let limiter = Arc::clone(&limiter);
            thread::spawn(move || vec![observe(&*limiter, KEY, 1), observe(&*limiter, KEY, 1)])
        };
        let mover = {
            let limiter = Arc::clone(&limiter);
            thread::spawn(move || match how {
                Move::NewKey => Some(observe(&*limiter, NEW_KEY, 1)),
                Move::Fold => {
                    limiter.switch_to_folding();
                    None
                }
            })
        };
        let threads = vec![spender.join().expect("spending thread panicked")];
        let new_key = mover.join().expect("moving thread panicked");
        let last = observe(&*limiter, KEY, 0);

        if let Some(new_key) = &new_key {
            assert!(
                new_key.answer.allowed,
                "model violation: a new key was refused its first unit: {new_key:?}"
            );
        }
        assert_eq!(
            limiter.len(),
            1 + usize::from(new_key.is_some()),
            "model violation: a key was lost in the move"
        );
        assert_well_formed(LIMIT, &threads[0]);
        assert_explained(&reference, &[before], &threads, &[last], Timing::AsRead);
    });
}

/// One second's window, in nanoseconds.
const WINDOW: u64 = 1_000_000_000;

/// The serial token bucket the packed one must match.
fn bucket() -> Bucket {
    Bucket {
        capacity: LIMIT,
        interval: WINDOW / LIMIT,
    }
}

/// The serial log the sliding log must match.
fn log() -> Log {
    Log {
        limit: LIMIT,
        window: WINDOW,
    }
}

#[test]
fn token_bucket_survives_a_table_move() {
    move_while_spending::<TokenBucketRule, _>(bucket(), Move::NewKey);
}

#[test]
fn fixed_window_survives_a_table_move() {
    let reference = Windows {
        limit: LIMIT,
        window: WINDOW,
    };
    move_while_spending::<FixedWindowRule, _>(reference, Move::NewKey);
}

#[test]
fn sliding_counter_survives_a_table_move() {
    let reference = SlidingCounts {
        limit: LIMIT,
        window: WINDOW,
    };
    move_while_spending::<SlidingWindowCounterRule, _>(reference, Move::NewKey);
}

#[test]
fn sliding_log_survives_a_table_move() {
    move_while_spending::<SlidingWindowLogRule, _>(log(), Move::NewKey);
}

#[test]
fn token_bucket_survives_the_switch_to_folding() {
    move_while_spending::<TokenBucketRule, _>(bucket(), Move::Fold);
}

#[test]
fn sliding_log_survives_the_switch_to_folding() {
    move_while_spending::<SlidingWindowLogRule, _>(log(), Move::Fold);
}
