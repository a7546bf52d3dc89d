//! Unit tests of [`StateMap`]: slots, misses, and the switch to folding.

use super::*;
use crate::packed_word::PackedWord;

/// Slots taken over all shards: live entries plus retired ones.
fn slots_taken(map: &StateMap<u64, PackedWord>) -> usize {
    map.shards.iter().map(|cell| lock(cell).taken).sum()
}

#[test]
fn removals_give_the_slots_back() {
    let map: StateMap<u64, PackedWord> = StateMap::new(Some(4), TableFill::DEFAULT, false);
    for key in 0..4_000 {
        map.read_or_insert(&key, || PackedWord::new(key), |_, _| ());
    }
    assert_eq!(slots_taken(&map), 4_000);
    for key in 0..3_990 {
        assert!(map.remove(&key), "key {key}");
        assert!(!map.remove(&key), "key {key} removed twice");
    }
    assert_eq!(map.len(), 10);
    // Each shard moves once most of its slots are retired, so what is
    // left is at most about twice the live keys, plus a small table's
    // worth per shard.
    let taken = slots_taken(&map);
    assert!(
        taken <= 2 * 10 + 4 * MIN_CAPACITY,
        "{taken} slots still taken"
    );
    for key in 3_990..4_000 {
        let seen = map.read_or_absent(&key, |word| Some(word.load()));
        assert!(matches!(seen, Seen::Live(k) if k == key) || seen == Seen::Unsure);
    }
}

#[test]
fn a_miss_in_the_current_table_is_absent_and_in_a_replaced_one_unsure() {
    let map: StateMap<u64, PackedWord> = StateMap::new(Some(1), TableFill::DEFAULT, false);
    // No table cached on this thread yet.
    assert_eq!(map.read_or_absent(&1, |w| Some(w.load())), Seen::Unsure);
    map.read_or_insert(&1, || PackedWord::new(7), |_, _| ());
    assert_eq!(map.read_or_absent(&1, |w| Some(w.load())), Seen::Live(7));
    assert_eq!(map.read_or_absent(&2, |w| Some(w.load())), Seen::Absent);
    // Another thread fills the shard until its table moves; this
    // thread's cached table is then the replaced one.
    let before = Arc::clone(&lock(&map.shards[0]).table);
    std::thread::scope(|s| {
        s.spawn(|| {
            for key in 100..200 {
                map.read_or_insert(&key, || PackedWord::new(key), |_, _| ());
            }
        });
    });
    assert!(!Arc::ptr_eq(&before, &lock(&map.shards[0]).table));
    drop(before);
    assert_eq!(map.read_or_absent(&150, |w| Some(w.load())), Seen::Unsure);
    // The locked look refreshes the cache.
    assert_eq!(map.read_locked(&150, PackedWord::load), Some(150));
    assert_eq!(
        map.read_or_absent(&150, |w| Some(w.load())),
        Seen::Live(150)
    );
    assert_eq!(map.read_or_absent(&2, |w| Some(w.load())), Seen::Absent);
}

/// Share of a one-shard compact map's keys off the straight-line lookup,
/// whether its table folds, and the share as hashed, for 10,000
/// `client-%08d` keys under the seeds of `draw`. Also checks the
/// shard's count against the table.
fn placed(draw: u64) -> (f64, bool, f64) {
    let hasher = MapHasher::seeded(draw);
    let map: StateMap<String, PackedWord> =
        StateMap::with_hasher(Some(1), TableFill::COMPACT, hasher);
    let keys: Vec<String> = (0..10_000).map(|i| format!("client-{i:08}")).collect();
    for key in &keys {
        map.read_or_insert(key.as_str(), || PackedWord::new(0), |_, _| ());
    }
    let shard = lock(&map.shards[0]);
    let hash_of = |key: &<String as Key>::Stored| map.hash_stored(key);
    assert_eq!(
        shard.off_path,
        shard.table.off_path_now(hash_of),
        "draw {draw}"
    );
    let as_hashed = off_path_count(
        shard.table.capacity(),
        keys.iter().map(|key| map.hash(key.as_str())),
    );
    let share = |count: usize| count as f64 / keys.len() as f64;
    (
        share(shard.off_path),
        shard.table.placement().folds(),
        share(as_hashed),
    )
}

/// Over 64 stores' seeds, the tables that placed keys sharing a prefix
/// badly as hashed folded, and every store ended near a random
/// function's share off the straight-line lookup (about 8 % at the fill
/// these tables end at), while most kept the cheaper unfolded hash.
#[test]
#[cfg_attr(miri, ignore)]
fn tables_fold_where_the_keys_crowd_and_only_there() {
    let runs: Vec<(f64, bool, f64)> = (0..64).map(placed).collect();
    let worst_as_hashed = runs.iter().map(|run| run.2).fold(0.0, f64::max);
    let worst = runs.iter().map(|run| run.0).fold(0.0, f64::max);
    let folded = runs.iter().filter(|run| run.1).count();
    assert!(
        worst_as_hashed > 0.15,
        "no seed crowded the keys: {worst_as_hashed:.3}"
    );
    assert!(
        worst < 0.09,
        "a store kept {worst:.3} off the straight-line lookup"
    );
    assert!((1..32).contains(&folded), "{folded} of 64 tables folded");
}

/// How many of the map's tables fold.
fn folded_tables<K: Key>(map: &StateMap<K, PackedWord>) -> usize {
    map.shards
        .iter()
        .filter(|cell| lock(cell).table.placement().folds())
        .count()
}

/// Each shard's table size, in shard order.
fn capacities<K: Key>(map: &StateMap<K, PackedWord>) -> Vec<usize> {
    map.shards
        .iter()
        .map(|cell| lock(cell).table.capacity())
        .collect()
}

/// `client-%08d` keys, and a map of 8 compact shards whose seeds (draw
/// 61) crowd them as hashed (the test above), filled until the insertion
/// that switched it to folding; returns the keys and how many went in.
fn switched_store() -> (StateMap<String, PackedWord>, Vec<String>, usize) {
    let map: StateMap<String, PackedWord> =
        StateMap::with_hasher(Some(8), TableFill::COMPACT, MapHasher::seeded(61));
    let keys: Vec<String> = (0..20_000).map(|i| format!("client-{i:08}")).collect();
    let mut inserted = 0;
    while inserted < keys.len() && !map.folds.load(Ordering::Relaxed) {
        map.read_or_insert(
            keys[inserted].as_str(),
            || PackedWord::new(inserted as u64),
            |_, _| (),
        );
        inserted += 1;
    }
    assert!(inserted < keys.len(), "the store never folded");
    (map, keys, inserted)
}

/// Once one shard's keys need the fold, the call that switched the
/// store moves that shard alone, and each later insertion one more, so
/// no call pauses for every shard and after one insertion per shard
/// every table folds (all lookups take the same branch). Every key is
/// still found.
#[test]
#[cfg_attr(miri, ignore)]
fn the_switch_moves_one_shard_per_insertion_until_every_table_folds() {
    let (map, keys, inserted) = switched_store();
    // Right after the call that switched, before any shard grew again.
    assert_eq!(folded_tables(&map), 1);
    let shards = map.shard_count();
    for (later, i) in (inserted..inserted + shards).enumerate() {
        map.read_or_insert(keys[i].as_str(), || PackedWord::new(i as u64), |_, _| ());
        let moved = later + 1;
        assert!(folded_tables(&map) >= moved, "after {moved} more");
    }
    assert_eq!(folded_tables(&map), shards);
    for (i, key) in keys.iter().enumerate().skip(inserted + shards) {
        map.read_or_insert(key.as_str(), || PackedWord::new(i as u64), |_, _| ());
    }
    for (i, key) in keys.iter().enumerate() {
        assert_eq!(
            map.read_locked(key.as_str(), PackedWord::load),
            Some(i as u64)
        );
    }
}

/// A sweep folds the shards the switch has not reached yet, so a store
/// whose keys stop coming right after the switch still folds throughout.
#[test]
#[cfg_attr(miri, ignore)]
fn a_sweep_folds_the_shards_the_switch_has_not_reached() {
    let (map, keys, inserted) = switched_store();
    assert_eq!(folded_tables(&map), 1);
    assert!(map.folds_pending());
    assert_eq!(map.sweep(|_| false), 0);
    assert_eq!(folded_tables(&map), map.shard_count());
    // Every shard folds now, so later insertions take no lock for the round.
    assert!(!map.folds_pending());
    for (i, key) in keys.iter().enumerate().take(inserted) {
        assert_eq!(
            map.read_locked(key.as_str(), PackedWord::load),
            Some(i as u64)
        );
    }
}

/// Moving a shard's keys to a folded table changes where they sit, not
/// how many slots they take: each table the sweep folds keeps its size,
/// so a store that folds after its keys stopped coming holds no more
/// memory than before (a move sized as a growth took up to 1.75x the
/// slots of a table more than half full).
#[test]
#[cfg_attr(miri, ignore)]
fn a_fold_move_keeps_the_table_size() {
    let (map, _, _) = switched_store();
    let before = capacities(&map);
    assert_eq!(map.sweep(|_| false), 0);
    assert_eq!(folded_tables(&map), map.shard_count());
    assert_eq!(capacities(&map), before);
}

/// A fold move made where the shard's next key would grow its table
/// builds the table that growth would, so a store that switched to
/// folding keeps to the sizes of one that never did. Sized for the live
/// keys alone, the move started the shard on another sequence of sizes
/// (at a million keys one shard in eight ended with 1.22x its usual
/// slots).
#[test]
#[cfg_attr(miri, ignore)]
fn a_fold_move_due_to_grow_sizes_as_the_growth_would() {
    let store = || -> StateMap<u64, PackedWord> {
        StateMap::with_hasher(Some(1), TableFill::DEFAULT, MapHasher::seeded(7))
    };
    let (switched, plain) = (store(), store());
    let key = |i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let insert = |map: &StateMap<u64, PackedWord>, i: u64| {
        map.read_or_insert(&key(i), || PackedWord::new(i), |_, _| ());
    };
    let due_to_grow = |map: &StateMap<u64, PackedWord>| {
        let shard = lock(&map.shards[0]);
        map.fill.too_full(shard.taken + 1, shard.table.capacity())
    };
    // Past the first few growths, up to the key that would grow the table.
    let mut next = 0;
    while next < 40 || !due_to_grow(&switched) {
        insert(&switched, next);
        next += 1;
    }
    assert!(switched.start_folding());
    switched.fold_shard(0);
    assert_eq!(folded_tables(&switched), 1);
    assert_eq!(
        capacities(&switched),
        [switched.capacity_for(next as usize + 1)]
    );
    for i in next..10_000 {
        insert(&switched, i);
    }
    for i in 0..10_000 {
        insert(&plain, i);
    }
    assert!(!plain.placement().folds(), "the plain store must not fold");
    assert_eq!(capacities(&switched), capacities(&plain));
}

/// The switch, with real threads: two insert their own keys (one of
/// them switches the store) while a third keeps reading keys inserted
/// before; every key keeps its state through the moves.
#[test]
#[cfg_attr(miri, ignore)]
fn the_switch_loses_no_key_while_threads_insert_and_read() {
    let map: StateMap<String, PackedWord> =
        StateMap::with_hasher(Some(8), TableFill::COMPACT, MapHasher::seeded(61));
    let key = |i: u64| format!("client-{i:08}");
    for i in 0..1_000 {
        map.read_or_insert(key(i).as_str(), || PackedWord::new(i), |_, _| ());
    }
    std::thread::scope(|s| {
        for half in 0..2_u64 {
            let (map, key) = (&map, &key);
            s.spawn(move || {
                for i in (1_000 + half..20_000).step_by(2) {
                    map.read_or_insert(key(i).as_str(), || PackedWord::new(i), |_, _| ());
                }
            });
        }
        let (map, key) = (&map, &key);
        s.spawn(move || {
            for round in 0..20_u64 {
                for i in 0..1_000 {
                    let i = (i * 7 + round) % 1_000;
                    let seen = map
                        .read(key(i).as_str(), |word| {
                            (!word.is_retired()).then(|| word.load())
                        })
                        .or_else(|| map.read_locked(key(i).as_str(), PackedWord::load));
                    assert_eq!(seen, Some(i), "key {i} in round {round}");
                }
            }
        });
    });
    assert!(map.folds.load(Ordering::Relaxed), "the store never folded");
    for i in 0..20_000 {
        assert_eq!(map.read_locked(key(i).as_str(), PackedWord::load), Some(i));
    }
}

/// A move folds keys that land clearly worse as hashed than folded, and
/// only those: the check at a move, apart from the crowding one.
#[test]
#[cfg_attr(miri, ignore)]
fn a_move_folds_only_keys_that_land_badly_as_hashed() {
    let keys: Vec<String> = (0..5_000).map(|i| format!("client-{i:08}")).collect();
    let pays = |draw: u64| {
        let map: StateMap<String, PackedWord> =
            StateMap::with_hasher(Some(1), TableFill::COMPACT, MapHasher::seeded(draw));
        let hashes: Vec<u64> = keys.iter().map(|key| map.hash(key.as_str())).collect();
        let capacity = TableFill::COMPACT.capacity_for(keys.len());
        let off_path = off_path_count(capacity, hashes.iter().copied());
        map.folding_pays(capacity, off_path, &hashes)
    };
    // Draw 61 crowds these keys; draw 0 spreads them well.
    assert!(pays(61));
    assert!(!pays(0));
}

/// A table whose count says crowded switches the store at the next key
/// that lands outside its home group: the check on insertion, apart
/// from the one at a move.
#[test]
#[cfg_attr(miri, ignore)]
fn a_crowded_table_switches_the_store_on_its_next_key_off_path() {
    let map: StateMap<u64, PackedWord> =
        StateMap::with_hasher(Some(2), TableFill::COMPACT, MapHasher::seeded(0));
    let spread = |key: u64| key.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for key in 0..1_000 {
        map.read_or_insert(&spread(key), || PackedWord::new(0), |_, _| ());
    }
    assert!(
        !map.folds.load(Ordering::Relaxed),
        "well-placed keys folded"
    );
    let mut key = 1_000;
    while !map.folds.load(Ordering::Relaxed) && key < 3_000 {
        // Say every taken slot is off the path, as a crowded table's would be.
        for cell in map.shards.iter() {
            let mut shard = lock(cell);
            shard.off_path = shard.taken;
        }
        map.read_or_insert(&spread(key), || PackedWord::new(0), |_, _| ());
        key += 1;
    }
    assert!(
        map.folds.load(Ordering::Relaxed),
        "the store never switched"
    );
    // One more insertion per shard moves the rest (the test above).
    for extra in 0..map.shard_count() as u64 {
        map.read_or_insert(&spread(key + extra), || PackedWord::new(0), |_, _| ());
    }
    assert_eq!(folded_tables(&map), map.shard_count());
}

/// A store whose keys place well as hashed never folds.
#[test]
#[cfg_attr(miri, ignore)]
fn a_store_of_well_placed_keys_does_not_fold() {
    let map: StateMap<u64, PackedWord> =
        StateMap::with_hasher(Some(4), TableFill::COMPACT, MapHasher::seeded(0));
    for key in 0..5_000_u64 {
        let spread = key.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        map.read_or_insert(&spread, || PackedWord::new(0), |_, _| ());
    }
    assert!(!map.folds.load(Ordering::Relaxed));
}

/// The largest shard's keys over the mean, for `keys` in a store of 8
/// shards under `hasher`'s seeds.
fn largest_shard<K: Key>(keys: &[K], hasher: MapHasher) -> f64 {
    let map: StateMap<K, PackedWord> = StateMap::with_hasher(Some(8), TableFill::DEFAULT, hasher);
    let mut counts = [0_usize; 8];
    for key in keys {
        counts[map.shard_of(map.key_hash(key.borrow()))] += 1;
    }
    let largest = counts.iter().copied().max().unwrap_or(0);
    largest as f64 * counts.len() as f64 / keys.len() as f64
}

/// Over 300 stores' seeds, a robust hash splits keys that differ only in
/// their last bytes over the shards as a random function would: with
/// 100,000 keys no shard gets 5 % more than the mean (about six standard
/// deviations of a random split). Shards picked by the hash's own bits
/// gave some shards of seven of these stores of `client-%08d` keys up to
/// 16 % more (and 31 % for `user%d`), so their tables grew early.
#[test]
#[cfg_attr(miri, ignore)]
fn a_robust_hash_spreads_keys_sharing_a_prefix_evenly_over_the_shards() {
    let clients: Vec<String> = (0..100_000).map(|i| format!("client-{i:08}")).collect();
    let users: Vec<String> = (0..100_000).map(|i| format!("user{i}")).collect();
    let ids: Vec<u64> = (0..100_000).collect();
    for draw in 0..300 {
        let robust = || MapHasher::seeded(draw).folding_always();
        for (shape, largest) in [
            ("client-%08d", largest_shard(&clients, robust())),
            ("user%d", largest_shard(&users, robust())),
            ("sequential ids", largest_shard(&ids, robust())),
        ] {
            assert!(
                largest < 1.05,
                "draw {draw}, {shape}: the largest shard holds {largest:.3}x the mean"
            );
        }
    }
}

/// A lock-free lookup finds every key with its own state whether the
/// key's table places keys as hashed, folds in a store that switched (the
/// lookup folds once it has the table) or folds from the start (a robust
/// hash, where the lookup reuses the fold that picked the shard).
#[test]
#[cfg_attr(miri, ignore)]
fn lock_free_lookups_find_every_key_however_its_table_places_keys() {
    let (switched, keys, inserted) = switched_store();
    let keys = &keys[..inserted];
    let robust: StateMap<String, PackedWord> = StateMap::with_hasher(
        Some(8),
        TableFill::COMPACT,
        MapHasher::seeded(61).folding_always(),
    );
    for (i, key) in keys.iter().enumerate() {
        robust.read_or_insert(key.as_str(), || PackedWord::new(i as u64), |_, _| ());
    }
    assert_eq!(folded_tables(&switched), 1, "one table folded, seven not");
    assert_eq!(folded_tables(&robust), 8);
    for map in [&switched, &robust] {
        // A locked lookup of a live key refreshes this thread's table.
        for key in keys {
            let found = map.read_or_insert(key.as_str(), || PackedWord::new(0), |_, found| found);
            assert_eq!(found, Found::Live, "key {key}");
        }
        for (i, key) in keys.iter().enumerate() {
            let state = map.read(key.as_str(), |word| Some(word.load()));
            assert_eq!(state, Some(i as u64), "key {key}");
        }
    }
}
