//! [`Key`]: how a keyed limiter looks up, compares and keeps its keys.
//!
//! A lookup hashes and compares the key's borrowed form ([`Key::Lookup`]:
//! `str` for `String`), and the limiter's table keeps its own stored form
//! ([`Key::Stored`]). For strings the stored form keeps up to 23 bytes in
//! the table entry itself ([`StoredStr`]), so finding a short key reads
//! no heap memory besides the caller's own key: on 10,000 `String` keys a
//! lookup went from 1.42-1.44x to 1.61-1.84x governor's speed
//! (`docs/benchmarks.md`, levers). A `String` key is never cloned into the
//! table either: a new key is copied from the caller's `&str`, without an
//! allocation up to 23 bytes.
//!
//! Keys with a cheap clone and no heap data (integers, addresses, small
//! structs) are kept as they are: mark such a type with [`StoredAsIs`].
//!
//! ```
//! use tollgate::{Quota, RateLimiter, StoredAsIs, TokenBucket};
//!
//! #[derive(Clone, PartialEq, Eq, Hash)]
//! struct Route {
//!     tenant: u32,
//!     endpoint: u16,
//! }
//! impl StoredAsIs for Route {}
//!
//! let limiter: TokenBucket<Route> = TokenBucket::new(Quota::per_second(5));
//! assert!(limiter.allow(&Route { tenant: 7, endpoint: 2 }));
//! ```

use std::borrow::{Borrow, Cow};
use std::hash::{BuildHasher, Hash, Hasher};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::sync::Arc;

use crate::short_bytes::same_bytes;
use crate::stored_str::StoredStr;

/// A type a keyed limiter tracks states under.
///
/// Implemented for strings (kept as [`StoredStr`]), byte strings, integers,
/// `char`, `bool`, network addresses, every [`StoredAsIs`] type, and
/// [`AsIs`] around any other cloneable key.
/// Callers pass any `Q` that borrows as [`Lookup`](Key::Lookup), the key
/// type itself included: for `String` keys, `&str`, `&String`,
/// `&Cow<str>` and the like. Several key types share a lookup form, so the
/// key type is not inferred from the calls: name it where the limiter is
/// made (`let limiter: TokenBucket = ...` keys by `String`, the default,
/// as does `TokenBucket::<String>::new`).
pub trait Key: Borrow<Self::Lookup> + Send + Sync {
    /// The form lookups hash and compare; its `Hash` and `Eq` define which
    /// keys are the same.
    type Lookup: ?Sized + Hash + Eq;

    /// The form the limiter keeps; borrows as the same `Lookup` it was
    /// made from.
    type Stored: Borrow<Self::Lookup> + Clone + Send + Sync;

    /// The stored form of `key`, made when a key is first tracked.
    fn store(key: &Self::Lookup) -> Self::Stored;

    /// `key`'s hash from `hasher`. Must give equal keys (by `Lookup`'s
    /// `Eq`) equal hashes; overridden only to hash faster (strings and byte
    /// strings hash their bytes alone, without the terminator `Hash` adds
    /// so that a string inside a tuple cannot run into the next field).
    #[inline]
    fn hash_with(key: &Self::Lookup, hasher: &impl BuildHasher) -> u64 {
        hasher.hash_one(key)
    }

    /// `stored`'s hash from `hasher`: the hash of the key it was made
    /// from, as [`hash_with`](Key::hash_with) gives it. Table moves hash
    /// every stored key; overridden only to skip the borrow (string keys
    /// hash their bytes without reading them as a `str`).
    #[inline]
    fn hash_stored(stored: &Self::Stored, hasher: &impl BuildHasher) -> u64 {
        Self::hash_with(stored.borrow(), hasher)
    }

    /// Whether `stored` is the stored form of `key`. Must agree with
    /// `Lookup`'s `Eq`; overridden only to compare faster (strings and byte
    /// strings compare without a `memcmp` call).
    #[inline]
    fn matches(stored: &Self::Stored, key: &Self::Lookup) -> bool {
        stored.borrow() == key
    }
}

/// A key kept in the limiter as it is, by cloning the caller's key.
///
/// An empty marker: `impl StoredAsIs for MyKey {}` makes `MyKey` a
/// [`Key`] looked up as `&MyKey`. Best for keys that own no heap data
/// (ids, addresses, small structs of them): a key holding a `String` works
/// too, but each lookup then reads that string's heap buffer, which the
/// crate's own string keys avoid.
pub trait StoredAsIs: Hash + Eq + Clone + Send + Sync {}

impl<T: StoredAsIs> Key for T {
    type Lookup = T;
    type Stored = T;

    #[inline]
    fn store(key: &T) -> T {
        key.clone()
    }
}

macro_rules! stored_as_is {
    ($($key:ty),* $(,)?) => {$(
        impl StoredAsIs for $key {}
    )*};
}

stored_as_is!(
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    char,
    bool,
    (),
    IpAddr,
    Ipv4Addr,
    Ipv6Addr,
    SocketAddr,
    SocketAddrV4,
    SocketAddrV6,
);

impl<A: StoredAsIs, B: StoredAsIs> StoredAsIs for (A, B) {}
impl<A: StoredAsIs, B: StoredAsIs, C: StoredAsIs> StoredAsIs for (A, B, C) {}
impl<T: StoredAsIs, const N: usize> StoredAsIs for [T; N] {}

/// Any cloneable key kept as it is, for types this crate does not mark and
/// a user cannot mark (another crate's type, a tuple holding a `String`):
/// `TokenBucket<AsIs<Uuid>>` is looked up by `&Uuid`.
///
/// ```
/// use tollgate::{AsIs, Quota, RateLimiter, TokenBucket};
///
/// let limiter: TokenBucket<AsIs<(String, u16)>> = TokenBucket::new(Quota::per_second(5));
/// assert!(limiter.allow(&("tenant-7".to_string(), 443)));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AsIs<T>(pub T);

impl<T> Borrow<T> for AsIs<T> {
    #[inline]
    fn borrow(&self) -> &T {
        &self.0
    }
}

impl<T: Hash + Eq + Clone + Send + Sync> Key for AsIs<T> {
    type Lookup = T;
    type Stored = T;

    #[inline]
    fn store(key: &T) -> T {
        key.clone()
    }
}

/// `bytes` hashed as one write: a whole key needs no terminator, since no
/// other field follows it.
#[inline]
pub(crate) fn hash_bytes(bytes: &[u8], hasher: &impl BuildHasher) -> u64 {
    let mut state = hasher.build_hasher();
    state.write(bytes);
    state.finish()
}

macro_rules! stored_as_str {
    ($($key:ty),* $(,)?) => {$(
        impl Key for $key {
            type Lookup = str;
            type Stored = StoredStr;

            #[inline]
            fn store(key: &str) -> StoredStr {
                StoredStr::new(key)
            }

            #[inline]
            fn hash_with(key: &str, hasher: &impl BuildHasher) -> u64 {
                hash_bytes(key.as_bytes(), hasher)
            }

            #[inline]
            fn hash_stored(stored: &StoredStr, hasher: &impl BuildHasher) -> u64 {
                hash_bytes(stored.as_bytes(), hasher)
            }

            #[inline]
            fn matches(stored: &StoredStr, key: &str) -> bool {
                same_bytes(stored.as_bytes(), key.as_bytes())
            }
        }
    )*};
}

stored_as_str!(String, Box<str>, Arc<str>, &'static str, Cow<'static, str>);

macro_rules! stored_as_bytes {
    ($($key:ty),* $(,)?) => {$(
        impl Key for $key {
            type Lookup = [u8];
            type Stored = Box<[u8]>;

            #[inline]
            fn store(key: &[u8]) -> Box<[u8]> {
                key.into()
            }

            #[inline]
            fn hash_with(key: &[u8], hasher: &impl BuildHasher) -> u64 {
                hash_bytes(key, hasher)
            }

            #[inline]
            fn matches(stored: &Box<[u8]>, key: &[u8]) -> bool {
                same_bytes(stored, key)
            }
        }
    )*};
}

stored_as_bytes!(Vec<u8>, Box<[u8]>, Arc<[u8]>, &'static [u8]);
