//! The floor under any keyed limiter: the fewest memory touches a lookup by
//! key can make, then the direct floor's clock read and CAS loop.
//!
//! [`KeyedFloor`] is not a limiter. It is built once from a fixed key set
//! and never inserts, evicts, grows or retires; it has no shards, no
//! per-thread cache, no tag words and no lock. Each key sits inline beside
//! its state in one 32-byte slot of a single open-addressing array filled to
//! at most a third, so a hit hashes the key, reads one slot (a line shared
//! with one other slot) and updates its state. What a keyed limiter must add
//! to this (finding keys that come and go, bounded memory, safe concurrent
//! insertion) shows as its distance from the floor, and a contender's ratio
//! to the floor says how far any design could move it on the machine at
//! hand.

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::AtomicU64;

use foldhash::fast::FixedState;
use tollgate::Clock;

use super::floor::clock_and_cas;

/// Longest key bytes a slot holds inline.
const INLINE: usize = 23;

/// A key the floor can hold inline: its bytes, at most [`INLINE`] of them.
pub trait FloorKey {
    /// Runs `f` on the bytes the floor hashes and compares.
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R;
}

impl FloorKey for String {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_bytes())
    }
}

impl FloorKey for u64 {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(&self.to_ne_bytes())
    }
}

/// One slot: a key's bytes inline, their length (0: empty) and its state.
#[repr(C, align(32))]
struct Slot {
    key: [u8; INLINE],
    len: u8,
    state: AtomicU64,
}

/// The ideal table for a fixed key set (module docs).
pub struct KeyedFloor {
    slots: Box<[Slot]>,
    mask: usize,
    hasher: FixedState,
}

impl KeyedFloor {
    /// A floor holding `keys` (each distinct and at most [`INLINE`] bytes),
    /// in a power-of-two array of at least three slots per key.
    pub fn new<K: FloorKey>(keys: &[K]) -> Self {
        let capacity = (keys.len() * 3).max(1).next_power_of_two();
        let mut slots: Box<[Slot]> = (0..capacity)
            .map(|_| Slot {
                key: [0; INLINE],
                len: 0,
                state: AtomicU64::new(0),
            })
            .collect();
        let hasher = FixedState::with_seed(0x0f10_0e5e);
        let mask = capacity - 1;
        for key in keys {
            key.with_bytes(|bytes| {
                assert!(
                    (1..=INLINE).contains(&bytes.len()),
                    "floor keys hold 1 to {INLINE} bytes"
                );
                let mut at = hash(&hasher, bytes) & mask;
                while slots[at].len != 0 {
                    at = (at + 1) & mask;
                }
                slots[at].key[..bytes.len()].copy_from_slice(bytes);
                slots[at].len = bytes.len() as u8;
            });
        }
        KeyedFloor {
            slots,
            mask,
            hasher,
        }
    }

    /// Finds `key` and moves its state as the direct floor does; `false`
    /// only for a key the floor was not built with.
    #[inline]
    pub fn allow(&self, clock: &impl Clock, key: &impl FloorKey) -> bool {
        key.with_bytes(|bytes| {
            let mut at = hash(&self.hasher, bytes) & self.mask;
            loop {
                let slot = &self.slots[at];
                if usize::from(slot.len) == bytes.len() && holds(&slot.key, bytes) {
                    return clock_and_cas(clock, &slot.state, 1);
                }
                if slot.len == 0 {
                    return false;
                }
                at = (at + 1) & self.mask;
            }
        })
    }
}

/// `bytes` hashed as one write, as tollgate hashes string keys.
#[inline]
fn hash(hasher: &FixedState, bytes: &[u8]) -> usize {
    let mut state = hasher.build_hasher();
    state.write(bytes);
    // Truncation keeps the low bits, which the mask selects anyway.
    state.finish() as usize
}

/// Whether `stored` starts with `bytes` (of a length the slot's `len`
/// already matched): word compares from both ends, not a `memcmp` call, for
/// the 8 to 23 bytes of the keys measured here.
#[inline]
fn holds(stored: &[u8; INLINE], bytes: &[u8]) -> bool {
    let len = bytes.len();
    if (8..=16).contains(&len) {
        let ends = |b: &[u8]| (load(b, 0), load(b, len - 8));
        ends(stored) == ends(bytes)
    } else if len > 16 {
        let ends = |b: &[u8]| (load(b, 0), load(b, 8), load(b, len - 8));
        ends(stored) == ends(bytes)
    } else {
        stored[..len] == *bytes
    }
}

/// The eight bytes of `bytes` from `at`, as a word.
#[inline]
fn load(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_ne_bytes(word)
}
