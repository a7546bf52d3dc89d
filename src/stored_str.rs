//! [`StoredStr`]: a string key as a limiter keeps it, up to
//! [`StoredStr::INLINE_CAPACITY`] bytes inside the table entry.
//!
//! The two forms share 24 bytes (the size of a `String`), told apart by one
//! byte:
//!
//! | form   | holds                                      | the length byte            |
//! |--------|--------------------------------------------|----------------------------|
//! | inline | the key's bytes, zero-padded to 23         | the length, 0 to 23        |
//! | heap   | a `Box<str>`: pointer and length            | a value above 23 (the tag) |
//!
//! The compiler lays the enum out so, and a test holds it to 24 bytes: the
//! length is an enum of 24 values, and the heap form's tag takes one of the
//! byte values the length never does. A found key's comparison therefore
//! reads the length as it is, where `compact_str`, which held these keys
//! before, decodes it from a last byte that may also be the key's own 24th
//! byte: on 10,000 `String` keys about 5 % less time per hit on one thread
//! and 8 % more decisions on two (`docs/benchmarks.md`, levers), for one
//! byte less inline and no `unsafe`. The price is a UTF-8 check whenever an
//! inline key is read as a `str`, which lookups, hashing and table moves
//! never do (they use the bytes).

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A string key as a limiter keeps it: up to
/// [`INLINE_CAPACITY`](Self::INLINE_CAPACITY) bytes inline, longer ones on
/// the heap.
#[derive(Clone, PartialEq, Eq)]
pub struct StoredStr(Repr);

/// The two forms (layout in the module docs).
#[derive(Clone, PartialEq, Eq)]
enum Repr {
    /// The key's bytes, zero-padded, and how many of them are the key.
    Inline {
        bytes: [u8; StoredStr::INLINE_CAPACITY],
        len: InlineLen,
    },
    /// A key longer than the inline bytes hold.
    Heap(Box<str>),
}

/// Declares [`InlineLen`] with one variant per length from the list, and
/// [`INLINE_LENS`], the same variants indexed by the length, so the list
/// is written once.
macro_rules! inline_lens {
    ($($variant:ident),+ $(,)?) => {
        /// An inline key's length: an enum rather than a `u8` so the
        /// compiler knows it is at most 23 (the heap form's tag lives in
        /// the values above, and slicing the inline bytes by it needs no
        /// bounds check).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        enum InlineLen {
            $($variant),+
        }

        /// Each length's [`InlineLen`], indexed by the length.
        const INLINE_LENS: [InlineLen; StoredStr::INLINE_CAPACITY + 1] =
            [$(InlineLen::$variant),+];
    };
}

inline_lens!(
    L0, L1, L2, L3, L4, L5, L6, L7, L8, L9, L10, L11, L12, L13, L14, L15, L16, L17, L18, L19, L20,
    L21, L22, L23,
);

impl StoredStr {
    /// The longest key kept in the table entry itself.
    pub const INLINE_CAPACITY: usize = 23;

    /// `key`'s stored form: inline up to
    /// [`INLINE_CAPACITY`](Self::INLINE_CAPACITY) bytes, without an
    /// allocation; longer keys copied to the heap.
    pub fn new(key: &str) -> Self {
        let len = key.len();
        if len <= Self::INLINE_CAPACITY {
            let mut bytes = [0; Self::INLINE_CAPACITY];
            bytes[..len].copy_from_slice(key.as_bytes());
            StoredStr(Repr::Inline {
                bytes,
                len: INLINE_LENS[len],
            })
        } else {
            StoredStr(Repr::Heap(key.into()))
        }
    }

    /// The key's bytes: what lookups compare and moves hash.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { bytes, len } => &bytes[..*len as usize],
            Repr::Heap(key) => key.as_bytes(),
        }
    }

    /// The key as a `str`.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // Never fails: the bytes are a whole `str`'s, copied by `new`,
            // and nothing changes them after.
            Repr::Inline { .. } => std::str::from_utf8(self.as_bytes())
                .expect("an inline key holds the bytes of the str it was made from"),
            Repr::Heap(key) => key,
        }
    }

    /// Whether the key lives in the table entry rather than on the heap.
    pub fn is_inline(&self) -> bool {
        matches!(self.0, Repr::Inline { .. })
    }
}

/// Hashes as the `str` does, as `Borrow<str>` requires.
impl Hash for StoredStr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl Borrow<str> for StoredStr {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for StoredStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    /// Every length up to twice the inline capacity, in one- and multi-byte
    /// characters, comes back whole, inline exactly up to the capacity.
    #[test]
    fn every_length_round_trips_inline_up_to_the_capacity() {
        for unit in ["x", "é", "€", "🦀"] {
            for count in 0..=2 * StoredStr::INLINE_CAPACITY {
                let key = unit.repeat(count);
                let stored = StoredStr::new(&key);
                assert_eq!(stored.as_str(), key);
                assert_eq!(stored.as_bytes(), key.as_bytes());
                assert_eq!(
                    stored.is_inline(),
                    key.len() <= StoredStr::INLINE_CAPACITY,
                    "{} bytes",
                    key.len()
                );
            }
        }
    }

    /// Equal keys are equal and hash as their `str`; keys differing in one
    /// byte, or only in length, are not equal.
    #[test]
    fn equality_and_hash_agree_with_str() {
        let hasher = std::hash::RandomState::new();
        for len in 0..=2 * StoredStr::INLINE_CAPACITY {
            let key: String = (0..len)
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect();
            let stored = StoredStr::new(&key);
            assert!(stored == StoredStr::new(&key));
            assert_eq!(hasher.hash_one(&stored), hasher.hash_one(key.as_str()));
            let longer = StoredStr::new(&format!("{key}a"));
            assert!(stored != longer, "{len} bytes against one more");
            for at in 0..len {
                let mut other = key.clone().into_bytes();
                other[at] = b'Z';
                let other = String::from_utf8(other).unwrap();
                assert!(stored != StoredStr::new(&other), "byte {at} of {len}");
            }
        }
    }

    /// The stored form takes a `String`'s 24 bytes, and an `Option` of it
    /// no more.
    #[test]
    fn takes_the_space_of_a_string() {
        assert_eq!(std::mem::size_of::<StoredStr>(), 24);
        assert_eq!(std::mem::size_of::<Option<StoredStr>>(), 24);
    }
}
