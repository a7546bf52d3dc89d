//! Key types: which lookups reach the same state, strings kept inline or on
//! the heap, keys carried through table moves, and keys marked
//! `StoredAsIs`.

use std::borrow::Cow;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use tollgate::{
    AsIs, Key, KeyedOptions, ManualClock, Quota, RateLimiter, StoredAsIs, StoredStr, TokenBucket,
};

/// One unit per hour per key, time frozen: a key's second request is
/// refused, so `allow` tells whether a key was seen before.
fn one_each<K: Key>() -> TokenBucket<K, ManualClock> {
    TokenBucket::with_clock(Quota::per_hour(1), ManualClock::new())
}

#[test]
fn short_strings_are_stored_inline_and_long_ones_on_the_heap() {
    let short: StoredStr = <String as Key>::store("client-00000042");
    assert!(short.is_inline());
    assert_eq!(short.as_str(), "client-00000042");
    let edge = "x".repeat(StoredStr::INLINE_CAPACITY);
    assert!(<String as Key>::store(&edge).is_inline());
    let long = "x".repeat(StoredStr::INLINE_CAPACITY + 1);
    let stored = <String as Key>::store(&long);
    assert!(!stored.is_inline());
    assert_eq!(stored.as_str(), long);
    assert_eq!(format!("{stored:?}"), format!("{long:?}"));
}

#[test]
fn every_borrowed_form_of_a_string_key_reaches_one_state() {
    let limiter = one_each::<String>();
    assert!(limiter.allow("tenant"));
    assert!(!limiter.allow(&String::from("tenant")));
    assert!(!limiter.allow(&Cow::<str>::Borrowed("tenant")));
    assert!(!limiter.allow(&Box::<str>::from("tenant")));
    assert!(!limiter.allow(&Arc::<str>::from("tenant")));
    assert_eq!(limiter.len(), 1);
}

#[test]
fn keys_that_differ_only_past_the_inline_length_are_distinct() {
    let limiter = one_each::<String>();
    let prefix = "p".repeat(40);
    let keys = [
        "",
        "a",
        &prefix,
        &format!("{prefix}a"),
        &format!("{prefix}b"),
    ];
    for key in keys {
        assert!(limiter.allow(key), "{key:?} is new");
    }
    for key in keys {
        assert!(!limiter.allow(key), "{key:?} was seen");
    }
    assert_eq!(limiter.len(), keys.len());
}

#[test]
fn other_string_key_types_look_up_by_str() {
    let boxed = one_each::<Box<str>>();
    assert!(boxed.allow("a"));
    assert!(!boxed.allow(&Box::<str>::from("a")));
    let shared = one_each::<Arc<str>>();
    assert!(shared.allow("a"));
    assert!(!shared.allow(&Arc::<str>::from("a")));
    let fixed = one_each::<&'static str>();
    assert!(fixed.allow("a"));
    assert!(!fixed.allow(&"a"));
}

#[test]
fn byte_string_keys_look_up_by_slice() {
    let limiter = one_each::<Vec<u8>>();
    assert!(limiter.allow(b"key".as_slice()));
    assert!(!limiter.allow(&b"key".to_vec()));
    assert!(limiter.allow(&vec![0u8; 100]));
    assert!(!limiter.allow([0u8; 100].as_slice()));
    assert_eq!(limiter.len(), 2);
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Route {
    tenant: u32,
    endpoint: &'static str,
}

impl StoredAsIs for Route {}

#[test]
fn a_type_marked_stored_as_is_is_a_key() {
    let limiter = one_each::<Route>();
    let route = |tenant| Route {
        tenant,
        endpoint: "/upload",
    };
    assert!(limiter.allow(&route(1)));
    assert!(limiter.allow(&route(2)));
    assert!(!limiter.allow(&route(1)));
}

#[test]
fn tuples_and_addresses_are_keys() {
    let pairs = one_each::<(u32, u64)>();
    assert!(pairs.allow(&(1, 2)));
    assert!(pairs.allow(&(2, 1)));
    assert!(!pairs.allow(&(1, 2)));
    let addresses = one_each::<IpAddr>();
    assert!(addresses.allow(&IpAddr::V4(Ipv4Addr::LOCALHOST)));
    assert!(addresses.allow(&IpAddr::V6(Ipv6Addr::LOCALHOST)));
    assert!(!addresses.allow(&IpAddr::V4(Ipv4Addr::LOCALHOST)));
}

#[test]
fn any_cloneable_key_wrapped_in_as_is_is_looked_up_by_itself() {
    // A tuple holding a `String` is neither marked nor markable outside
    // this crate.
    let limiter = one_each::<AsIs<(String, u16)>>();
    assert!(limiter.allow(&("a".to_string(), 1)));
    assert!(limiter.allow(&("a".to_string(), 2)));
    assert!(!limiter.allow(&("a".to_string(), 1)));
    assert!(!limiter.allow(&AsIs(("a".to_string(), 2))));
    assert_eq!(limiter.len(), 2);
}

/// Keys enough to move a one-shard table several times; fewer under Miri,
/// which interprets every step.
const MOVING_KEYS: usize = if cfg!(miri) { 200 } else { 2_000 };

/// Inline and heap keys alike, and keys on either side of the inline
/// capacity, survive many table moves, with and without another thread
/// holding the old tables (which makes the moves clone keys instead of
/// moving them).
#[test]
fn string_keys_of_both_kinds_survive_table_moves() {
    let key = |i: usize| match i % 3 {
        0 => format!("k{i}"),
        // All digits, two bytes either side of the inline capacity.
        1 => format!(
            "{i:0>width$}",
            width = StoredStr::INLINE_CAPACITY - 1 + (i / 3) % 4
        ),
        _ => format!("a-key-long-enough-for-the-heap-{i:08}"),
    };
    for readers in [0, 2] {
        let options = KeyedOptions::new().shards(1).auto_sweep(false);
        let limiter: Arc<TokenBucket<String, ManualClock>> = Arc::new(TokenBucket::with_options(
            Quota::per_hour(1),
            ManualClock::new(),
            options,
        ));
        // Peekers that have cached a table: the moves start only once all
        // have, so every move below has another thread holding a table.
        let caching = Arc::new(AtomicUsize::new(0));
        let peekers: Vec<_> = (0..readers)
            .map(|_| {
                let (limiter, caching) = (limiter.clone(), caching.clone());
                thread::spawn(move || {
                    // Peeks keep an old table cached on this thread.
                    let mut peeks = u64::from(limiter.check_n("k0", 0).is_ok());
                    // Relaxed: a count to wait on; it orders no other memory.
                    caching.fetch_add(1, Ordering::Relaxed);
                    while limiter.len() < MOVING_KEYS {
                        peeks += u64::from(limiter.check_n("k0", 0).is_ok());
                    }
                    peeks
                })
            })
            .collect();
        // Relaxed: see above.
        while caching.load(Ordering::Relaxed) < readers {
            thread::yield_now();
        }
        for i in 0..MOVING_KEYS {
            assert!(limiter.allow(&key(i)), "key {i} is new");
        }
        for peeker in peekers {
            assert!(peeker.join().expect("peeker") > 0);
        }
        for i in 0..MOVING_KEYS {
            assert!(!limiter.allow(&key(i)), "key {i} was tracked");
        }
        assert_eq!(limiter.len(), MOVING_KEYS);
    }
}

/// A key type whose `Hash` must never run: its `Key::hash_with` hashes the
/// name itself, as the string keys do.
#[derive(Clone, PartialEq, Eq)]
struct Tenant(String);

impl std::hash::Hash for Tenant {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {
        panic!("the tables hash keys with Key::hash_with");
    }
}

impl Key for Tenant {
    type Lookup = Tenant;
    type Stored = Tenant;

    fn store(key: &Tenant) -> Tenant {
        key.clone()
    }

    fn hash_with(key: &Tenant, hasher: &impl std::hash::BuildHasher) -> u64 {
        use std::hash::Hasher;
        let mut state = hasher.build_hasher();
        state.write(key.0.as_bytes());
        state.finish()
    }
}

/// Lookups, insertions and the table moves they cause all hash through
/// `Key::hash_with`: a key hashed any other way on one of those paths would
/// panic here, or be missed after a move and admitted twice.
#[test]
fn a_keys_own_hash_is_the_only_one_the_tables_use() {
    let options = KeyedOptions::new().shards(1).auto_sweep(false);
    let limiter: TokenBucket<Tenant, ManualClock> =
        TokenBucket::with_options(Quota::per_hour(1), ManualClock::new(), options);
    let tenant = |i: u32| Tenant(format!("tenant-{i}"));
    each_passes_once_then_is_refused("tenants", |i| limiter.allow(&tenant(i)));
    assert_eq!(limiter.len(), MOVING_KEYS);
    assert_eq!(limiter.evict_idle(), 0);
}

/// A limiter with the robust hash tracks every kind of key as the default
/// one does, through the table moves that thousands of keys cause: each
/// key's first request passes and its second is refused, on one shard and
/// on many (on one alone under Miri, which interprets slowly).
#[test]
fn the_robust_hash_finds_every_key_again() {
    let shard_counts: &[usize] = if cfg!(miri) { &[1] } else { &[1, 16] };
    for &shards in shard_counts {
        let options = KeyedOptions::new()
            .shards(shards)
            .auto_sweep(false)
            .robust_hash(true);
        let strings: TokenBucket<String, ManualClock> =
            TokenBucket::with_options(Quota::per_hour(1), ManualClock::new(), options);
        let ids: TokenBucket<u64, ManualClock> =
            TokenBucket::with_options(Quota::per_hour(1), ManualClock::new(), options);
        let addresses: TokenBucket<Ipv4Addr, ManualClock> =
            TokenBucket::with_options(Quota::per_hour(1), ManualClock::new(), options);
        let name = |i: u32| format!("client-{i:08}");
        let address = |i: u32| Ipv4Addr::from(0x0a00_0000 | i);
        each_passes_once_then_is_refused(&format!("{shards} shards, strings"), |i| {
            strings.allow(&name(i))
        });
        each_passes_once_then_is_refused(&format!("{shards} shards, ids"), |i| {
            ids.allow(&u64::from(i))
        });
        each_passes_once_then_is_refused(&format!("{shards} shards, addresses"), |i| {
            addresses.allow(&address(i))
        });
        assert_eq!(strings.len(), MOVING_KEYS);
        assert_eq!(ids.len(), MOVING_KEYS);
        assert_eq!(addresses.len(), MOVING_KEYS);
    }
}

/// Asks for keys 0 to [`MOVING_KEYS`] twice through `allow`: every key
/// passes the first time and is refused the second.
fn each_passes_once_then_is_refused(what: &str, allow: impl Fn(u32) -> bool) {
    for i in 0..MOVING_KEYS as u32 {
        assert!(allow(i), "{what}: key {i} is new");
    }
    for i in 0..MOVING_KEYS as u32 {
        assert!(!allow(i), "{what}: key {i} was tracked");
    }
}
