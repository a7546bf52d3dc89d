//! A survey of where keys land over many stores' seeds: the share of keys
//! off the straight-line lookup (see [`Placement`]) for keys that differ
//! only in their last bytes, placed as hashed, folded where they crowd (the
//! default), and always folded (`robust_hash`). The figures behind the
//! table in `docs/benchmarks/xeon-167.md` ("The hash's spread"), which
//! this prints:
//!
//! ```text
//! cargo test --lib placement_survey -- --nocapture
//! ```

use std::net::Ipv4Addr;

use super::*;
use crate::packed_word::PackedWord;

/// Stores surveyed per key shape and fill, each with its own seeds.
const DRAWS: u64 = 300;

/// Keys per store.
const KEYS: u32 = 10_000;

/// Shards per store: what the default gives a 2-core machine.
const SHARDS: usize = 8;

/// One store's shares of keys off the straight-line lookup.
struct Shares {
    /// Placed by the hash as it is (the final tables' sizes, filled in order).
    as_hashed: f64,
    /// The store as it is: folding once its keys crowd.
    where_crowded: f64,
    /// Whether that store switched to folding.
    switched: bool,
    /// Every table folded from the first key.
    always: f64,
}

/// A store of `keys` under the seeds of `hasher`, every key tracked.
fn filled<K: Key>(keys: &[K], fill: TableFill, hasher: MapHasher) -> StateMap<K, PackedWord> {
    let map = StateMap::with_hasher(Some(SHARDS), fill, hasher);
    for key in keys {
        map.read_or_insert(key.borrow(), || PackedWord::new(0), |_, _| ());
    }
    map
}

/// Keys off the straight-line lookup in all of `map`'s tables, as counted
/// by each shard.
fn off_path(map: &StateMap<impl Key, PackedWord>) -> usize {
    map.shards.iter().map(|cell| lock(cell).off_path).sum()
}

/// [`Shares`] for `keys` in a store drawn from `draw`.
fn shares<K: Key>(keys: &[K], fill: TableFill, draw: u64) -> Shares {
    let map = filled(keys, fill, MapHasher::seeded(draw));
    let always = filled(keys, fill, MapHasher::seeded(draw).folding_always());
    // The shard comes from the unfolded hash, so a shard holds the same
    // keys in every store; as hashed, they go into the tables `map` ended
    // with (a store that switched may end with other sizes: the switch
    // sizes each table for the keys it holds then).
    let mut hashes = vec![Vec::new(); map.shards.len()];
    for key in keys {
        let hash = map.key_hash(key.borrow());
        hashes[map.shard_of(hash)].push(hash.hash);
    }
    let as_hashed: usize = hashes
        .into_iter()
        .zip(map.shards.iter())
        .map(|(hashes, cell)| off_path_count(lock(cell).table.capacity(), hashes))
        .sum();
    let share = |count: usize| count as f64 / keys.len() as f64;
    Shares {
        as_hashed: share(as_hashed),
        where_crowded: share(off_path(&map)),
        switched: map.folds.load(Ordering::Relaxed),
        always: share(off_path(&always)),
    }
}

/// The median, 99th percentile and largest of `values`, as percentages.
fn percentiles(mut values: Vec<f64>) -> [f64; 3] {
    values.sort_by(f64::total_cmp);
    let last = values.len() - 1;
    [0.5, 0.99, 1.0].map(|q| 100.0 * values[(last as f64 * q).round() as usize])
}

/// What the survey found for one key shape and fill: percentages off the
/// path at the median, 99th percentile and worst, and stores that folded.
struct Row {
    as_hashed: [f64; 3],
    where_crowded: [f64; 3],
    always: [f64; 3],
    switched: usize,
}

fn survey<K: Key>(keys: &[K], fill: TableFill) -> Row {
    let runs: Vec<Shares> = (0..DRAWS).map(|draw| shares(keys, fill, draw)).collect();
    let spread = |field: fn(&Shares) -> f64| percentiles(runs.iter().map(field).collect());
    Row {
        as_hashed: spread(|s| s.as_hashed),
        where_crowded: spread(|s| s.where_crowded),
        always: spread(|s| s.always),
        switched: runs.iter().filter(|s| s.switched).count(),
    }
}

/// splitmix64's output for `i`: keys with nothing in common.
fn random_key(i: u32) -> u64 {
    let mut z = u64::from(i)
        .wrapping_add(1)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Over 300 stores' seeds per key shape, folding where the keys crowd
/// keeps every store near a random function's share off the straight-line
/// lookup (always folding's), while stores of keys with nothing in common
/// almost never fold. Prints the table `docs/benchmarks/xeon-167.md`
/// quotes.
#[test]
#[cfg_attr(miri, ignore)]
fn keys_that_crowd_as_hashed_end_near_a_random_functions_share() {
    let clients: Vec<String> = (0..KEYS).map(|i| format!("client-{i:08}")).collect();
    let tenants: Vec<String> = (0..KEYS)
        .map(|i| format!("tenant-0042/client-{i:08}"))
        .collect();
    let ids: Vec<u64> = (0..u64::from(KEYS)).collect();
    let subnet: Vec<Ipv4Addr> = (0..KEYS).map(|i| Ipv4Addr::from(0x0a00_0000 + i)).collect();
    let random: Vec<u64> = (0..KEYS).map(random_key).collect();
    println!(
        "| keys, tables | as hashed: median / p99 / worst % | folding where they crowd | \
         always folded | stores that folded |"
    );
    println!("|---|---|---|---|---:|");
    // Bounds on the default's 99th percentile and worst, in percent: these
    // stores end with compact tables where always folding leaves about
    // 8 % off the path, and with roomy ones where it leaves about 2 %.
    for (fill, fill_name, p99_bound, worst_bound) in [
        (TableFill::COMPACT, "compact", 16.0, 20.0),
        (TableFill::DEFAULT, "default fill", 5.0, 6.0),
    ] {
        let rows = [
            ("`client-%08d`", survey(&clients, fill)),
            ("`tenant-0042/client-%08d`", survey(&tenants, fill)),
            ("sequential ids", survey(&ids, fill)),
            ("one subnet's addresses", survey(&subnet, fill)),
            ("random `u64`", survey(&random, fill)),
        ];
        for (shape, row) in &rows {
            let cell = |p: [f64; 3]| format!("{:.1} / {:.1} / {:.1}", p[0], p[1], p[2]);
            println!(
                "| {shape}, {fill_name} | {} | {} | {} | {} of {DRAWS} |",
                cell(row.as_hashed),
                cell(row.where_crowded),
                cell(row.always),
                row.switched
            );
        }
        for (shape, row) in &rows {
            assert!(
                row.where_crowded[1] <= p99_bound && row.where_crowded[2] <= worst_bound,
                "{shape}, {fill_name}: {:.1?} % off the path (median, p99, worst)",
                row.where_crowded
            );
        }
        let [.., (_, random_row)] = &rows;
        let random_switched = random_row.switched;
        assert!(
            random_switched <= 3,
            "{random_switched} of {DRAWS} stores of random keys folded ({fill_name})"
        );
    }
}
