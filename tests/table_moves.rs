//! Lookups take no lock, so a thread may still hold a table its shard has
//! already replaced. These tests move tables (by inserting many keys into
//! one shard, and by sweeps that leave most slots retired) while other
//! threads spend, and check with time frozen that every unit is counted
//! exactly once.

use std::hash::{Hash, Hasher};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use tollgate::{
    Algorithm, FixedWindowRule, KeyedLimiter, KeyedOptions, ManualClock, Quota, RateLimiter,
    SlidingWindowCounterRule, SlidingWindowLogRule, StoredAsIs, TokenBucketRule,
};

const SPENDERS: usize = 3;
const HOT_KEYS: u64 = 8;
const LIMIT: u64 = 50;

type Limiter<A> = KeyedLimiter<A, u64, ManualClock>;

/// `n` keys, or a two-hundredth of them under Miri, which interprets every
/// step; from a 16-slot table even that many still move it several times.
const fn scaled(n: u64) -> u64 {
    if cfg!(miri) { n / 200 } else { n }
}

/// One shard, so every insertion grows the hot keys' table.
fn one_shard<A: Algorithm>() -> Arc<Limiter<A>> {
    let options = KeyedOptions::new().shards(1).auto_sweep(false);
    Arc::new(Limiter::<A>::with_options(
        Quota::per_minute(LIMIT),
        ManualClock::new(),
        options,
    ))
}

/// Spenders hammer the hot keys while another thread inserts `newcomers`
/// keys, moving the table many times; each hot key admits exactly `LIMIT`.
fn spends_survive_growth<A: Algorithm>(newcomers: u64) {
    let limiter = one_shard::<A>();
    let inserting = Arc::new(AtomicBool::new(true));
    let start = Arc::new(Barrier::new(SPENDERS + 1));
    let spenders: Vec<_> = (0..SPENDERS)
        .map(|_| {
            let (limiter, inserting, start) = (limiter.clone(), inserting.clone(), start.clone());
            thread::spawn(move || {
                let mut admitted = vec![0u64; HOT_KEYS as usize];
                start.wait();
                // Keep spending while the table moves, then once more each.
                let mut rounds = 0;
                while inserting.load(Ordering::Relaxed) || rounds < 2 * LIMIT {
                    for key in 0..HOT_KEYS {
                        admitted[key as usize] += u64::from(limiter.allow(&key));
                    }
                    rounds += 1;
                }
                admitted
            })
        })
        .collect();
    start.wait();
    for key in HOT_KEYS..HOT_KEYS + newcomers {
        assert!(limiter.allow(&key), "newcomer {key} refused its first unit");
    }
    inserting.store(false, Ordering::Relaxed);
    let per_thread: Vec<Vec<u64>> = spenders.into_iter().map(|h| h.join().unwrap()).collect();
    for key in 0..HOT_KEYS {
        let admitted: u64 = per_thread.iter().map(|counts| counts[key as usize]).sum();
        assert_eq!(
            admitted, LIMIT,
            "key {key}: {admitted} admitted, limit {LIMIT}"
        );
        let peek = limiter.check_n(&key, 0).unwrap();
        assert_eq!(peek.remaining(), 0, "key {key} after the moves: {peek:?}");
    }
    assert_eq!(limiter.len() as u64, HOT_KEYS + newcomers);
}

#[test]
fn token_bucket_units_survive_table_growth() {
    spends_survive_growth::<TokenBucketRule>(scaled(20_000));
}

#[test]
fn fixed_window_units_survive_table_growth() {
    spends_survive_growth::<FixedWindowRule>(scaled(20_000));
}

#[test]
fn sliding_counter_units_survive_table_growth() {
    spends_survive_growth::<SlidingWindowCounterRule>(scaled(20_000));
}

#[test]
fn sliding_log_units_survive_table_growth() {
    spends_survive_growth::<SlidingWindowLogRule>(scaled(5_000));
}

/// A thread whose cached table was replaced (by growth, then by a sweep
/// that retired most slots) while it waited still sees its key's spent
/// units when it comes back.
#[test]
fn a_thread_back_from_waiting_sees_the_moved_state() {
    let limiter = one_shard::<TokenBucketRule>();
    let (go_on, wait) = std::sync::mpsc::channel::<()>();
    let (paused, pause) = std::sync::mpsc::channel::<()>();
    let spender = {
        let limiter = limiter.clone();
        thread::spawn(move || {
            // Caches the first table and spends all but one unit of key 0.
            let spent = (0..LIMIT - 1).filter(|_| limiter.allow(&0)).count();
            paused.send(()).unwrap();
            wait.recv().unwrap();
            let answers: Vec<bool> = (0..3).map(|_| limiter.allow(&0)).collect();
            (spent, answers)
        })
    };
    pause.recv().unwrap();
    // Grow the table many times over with newcomers spending one unit each.
    let newcomers = scaled(10_000);
    for key in 1..=newcomers {
        assert!(limiter.allow(&key));
    }
    assert_eq!(limiter.len() as u64, newcomers + 1);
    // One refill interval later the newcomers are full again and key 0 has
    // one unit back: the sweep retires all but key 0 and shrinks the table.
    limiter
        .clock()
        .advance(std::time::Duration::from_millis(60_000 / LIMIT));
    assert_eq!(limiter.evict_idle() as u64, newcomers);
    assert_eq!(limiter.len(), 1);
    // Spent here, through the new table: a stale copy would not know it.
    assert!(limiter.allow(&0));
    go_on.send(()).unwrap();
    let (spent, answers) = spender.join().unwrap();
    assert_eq!(spent as u64, LIMIT - 1);
    // Of the unit left and the one refilled, one is spent above: one passes.
    assert_eq!(answers, [true, false, false]);
}

/// A key whose `Hash` panics while [`PANIC_ON`] holds its number.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Touchy(u64);

static PANIC_ON: AtomicU64 = AtomicU64::new(u64::MAX);

impl Hash for Touchy {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Relaxed: one thread sets and reads it.
        if self.0 == PANIC_ON.load(Ordering::Relaxed) {
            panic!("hashing key {}", self.0);
        }
        self.0.hash(state);
    }
}

impl StoredAsIs for Touchy {}

/// A move hashes every live key; when the key's own `Hash` panics there,
/// the shard keeps its table and every state in it.
#[test]
fn a_hash_that_panics_in_a_move_leaves_the_shard_as_it_was() {
    let options = KeyedOptions::new().shards(1).auto_sweep(false);
    let limiter: KeyedLimiter<TokenBucketRule, Touchy, ManualClock> =
        KeyedLimiter::with_options(Quota::per_hour(1), ManualClock::new(), options);
    for key in 0..10 {
        assert!(limiter.allow(&Touchy(key)));
    }
    PANIC_ON.store(0, Ordering::Relaxed);
    // New keys until one's insertion moves the table, which hashes key 0.
    let mut next = 100;
    loop {
        let inserted = panic::catch_unwind(AssertUnwindSafe(|| limiter.allow(&Touchy(next))));
        if inserted.is_err() {
            break;
        }
        next += 1;
        assert!(next < 10_000, "no move in 9,900 insertions");
    }
    PANIC_ON.store(u64::MAX, Ordering::Relaxed);
    // Every key tracked before the panic still has its one unit spent.
    for key in (0..10).chain(100..next) {
        assert!(!limiter.allow(&Touchy(key)), "key {key} lost its state");
    }
    assert_eq!(limiter.len() as u64, 10 + next - 100);
    // The key whose insertion panicked, and others, still go in.
    assert!(limiter.allow(&Touchy(next)));
    assert!(limiter.allow(&Touchy(20_000)));
}

/// A key whose `Drop` panics while [`DROP_PANICS_ON`] holds its number.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Brittle(u64);

static DROP_PANICS_ON: AtomicU64 = AtomicU64::new(u64::MAX);

impl Drop for Brittle {
    fn drop(&mut self) {
        // Relaxed: one thread sets and reads it.
        if self.0 == DROP_PANICS_ON.load(Ordering::Relaxed) && !std::thread::panicking() {
            panic!("dropping key {}", self.0);
        }
    }
}

impl StoredAsIs for Brittle {}

/// A move that owns the old table drops the keys of retired states; when a
/// key's `Drop` panics there, the panic reaches the caller only once the
/// shard holds its new table, so every live state stays found.
#[test]
fn a_drop_that_panics_in_a_move_leaves_the_shard_working() {
    let options = KeyedOptions::new().shards(1).auto_sweep(false);
    let clock = ManualClock::new();
    let limiter: KeyedLimiter<TokenBucketRule, Brittle, ManualClock> =
        KeyedLimiter::with_options(Quota::per_hour(1), clock.clone(), options);
    for key in 0..100 {
        assert!(limiter.allow(&Brittle(key)));
    }
    // Keys 0..60 refill and go idle; keys 60..100 spend their new unit.
    clock.advance(Duration::from_secs(3_600));
    for key in 60..100 {
        assert!(limiter.allow(&Brittle(key)));
    }
    DROP_PANICS_ON.store(7, Ordering::Relaxed);
    // The sweep retires keys 0..60, and with most slots retired the shard
    // moves its 40 live states; this thread holds no other table, so the
    // move owns the old one and drops key 7 there.
    let swept = panic::catch_unwind(AssertUnwindSafe(|| limiter.evict_idle()));
    DROP_PANICS_ON.store(u64::MAX, Ordering::Relaxed);
    assert!(swept.is_err(), "key 7's drop ran in the move");
    for key in 60..100 {
        assert!(!limiter.allow(&Brittle(key)), "key {key} lost its state");
    }
    assert_eq!(limiter.len(), 40);
    for key in 0..60 {
        assert!(limiter.allow(&Brittle(key)), "key {key} was evicted");
    }
    assert_eq!(limiter.len(), 100);
}
