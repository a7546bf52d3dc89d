//! Single-thread timing: contenders take turns, batch by batch, so drift
//! on a noisy machine hits all of them alike; each reports its median.

use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::support::keys::Pick;
use crate::support::median::median;

/// One contender: runs `n` decisions, returns the time taken and how many
/// were admitted.
pub struct Timed<'a> {
    /// The row label.
    pub name: &'static str,
    run: Box<dyn FnMut(u64) -> (Duration, u64) + 'a>,
}

/// What one contender measured.
#[derive(Clone, Debug)]
pub struct Sample {
    /// The row label.
    pub name: &'static str,
    /// Median nanoseconds per decision over the rounds.
    pub median_ns: f64,
    /// Nanoseconds per decision of the fastest round.
    pub fastest_ns: f64,
    /// Rounds that took `SLOW_ROUND` times the fastest or more: near half
    /// the rounds, the median sits on a machine flickering between two
    /// speeds and may land on either, apart from its neighbours' rows.
    pub slow_rounds: usize,
    /// Decisions made over all rounds.
    pub decisions: u64,
    /// Decisions that admitted.
    pub admitted: u64,
}

/// A round this much slower than the row's fastest counts as slow.
pub const SLOW_ROUND: f64 = 1.3;

/// A contender deciding on keys picked from `keys`, each tracked first.
pub fn keyed<'a, K>(
    name: &'static str,
    keys: &'a [K],
    allow: impl Fn(&K) -> bool + 'a,
) -> Timed<'a> {
    for key in keys {
        allow(key);
    }
    let mut pick = Pick::new(0x5eed);
    Timed {
        name,
        run: Box::new(move |n| {
            // The other contenders' batches pushed this one's keys out of
            // the caches; two untimed passes bring them back, as they would
            // be in a service that does nothing else.
            for _ in 0..2 * keys.len() {
                black_box(allow(black_box(&keys[pick.below(keys.len())])));
            }
            let mut admitted = 0;
            let began = Instant::now();
            for _ in 0..n {
                admitted += u64::from(black_box(allow(black_box(&keys[pick.below(keys.len())]))));
            }
            (began.elapsed(), admitted)
        }),
    }
}

/// A contender making first requests: each batch gets a fresh limiter from
/// `make` (built and dropped outside the timing) and asks it for keys
/// `0..n`, none of which it has seen.
pub fn new_keys<'a, L: 'a>(
    name: &'static str,
    make: impl Fn() -> L + 'a,
    allow: impl Fn(&L, u64) -> bool + 'a,
) -> Timed<'a> {
    Timed {
        name,
        run: Box::new(move |n| {
            let limiter = make();
            let mut admitted = 0;
            let began = Instant::now();
            for key in 0..n {
                admitted += u64::from(black_box(allow(&limiter, black_box(key))));
            }
            (began.elapsed(), admitted)
        }),
    }
}

/// A contender with no key.
pub fn single<'a>(name: &'static str, allow: impl Fn() -> bool + 'a) -> Timed<'a> {
    Timed {
        name,
        run: Box::new(move |n| {
            let mut admitted = 0;
            let began = Instant::now();
            for _ in 0..n {
                admitted += u64::from(black_box(allow()));
            }
            (began.elapsed(), admitted)
        }),
    }
}

/// Runs `rounds` rounds of one `batch`-decision batch per contender.
pub fn measure(contenders: &mut [Timed<'_>], rounds: usize, batch: u64) -> Vec<Sample> {
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); contenders.len()];
    let mut admitted = vec![0; contenders.len()];
    for round in 0..rounds {
        // Rotate the starting contender so none always runs first.
        for i in 0..contenders.len() {
            let c = (i + round) % contenders.len();
            let (elapsed, ok) = (contenders[c].run)(batch);
            times[c].push(elapsed.as_nanos() as f64 / batch as f64);
            admitted[c] += ok;
        }
    }
    contenders
        .iter()
        .zip(times)
        .zip(admitted)
        .map(|((c, mut t), admitted)| {
            let fastest_ns = t.iter().copied().fold(f64::INFINITY, f64::min);
            Sample {
                name: c.name,
                fastest_ns,
                slow_rounds: t
                    .iter()
                    .filter(|&&ns| ns >= SLOW_ROUND * fastest_ns)
                    .count(),
                median_ns: median(&mut t),
                decisions: batch * rounds as u64,
                admitted,
            }
        })
        .collect()
}
