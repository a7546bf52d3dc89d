//! Every limiter fills whole cache lines of its own, so a caller's data
//! beside it, written by other threads, never shares a line with the words
//! its decisions read and write (`docs/design.md`, "Lookups without locks").

use std::mem::{align_of, size_of};

use crossbeam_utils::CachePadded;
use tollgate::{
    DirectLimiter, FixedWindow, FixedWindowRule, SlidingWindowCounter, SlidingWindowCounterRule,
    SlidingWindowLog, SlidingWindowLogRule, TokenBucket, TokenBucketRule,
};

/// The boundary `CachePadded` uses on this target (128 bytes on `x86_64`).
const LINE: usize = align_of::<CachePadded<()>>();

/// `T` starts on a padding boundary, so no caller data shares its lines.
fn fills_whole_lines<T>(what: &str) {
    assert!(
        align_of::<T>() >= LINE,
        "{what} is aligned to {} bytes, not {LINE}: data placed beside it can share its lines",
        align_of::<T>()
    );
    // Rust rounds a size up to the alignment; checked so the claim is whole.
    assert_eq!(size_of::<T>() % LINE, 0, "{what} ends inside a line");
}

#[test]
fn direct_limiters_fill_whole_lines() {
    fills_whole_lines::<DirectLimiter<TokenBucketRule>>("DirectLimiter<TokenBucketRule>");
    fills_whole_lines::<DirectLimiter<FixedWindowRule>>("DirectLimiter<FixedWindowRule>");
    fills_whole_lines::<DirectLimiter<SlidingWindowCounterRule>>(
        "DirectLimiter<SlidingWindowCounterRule>",
    );
    fills_whole_lines::<DirectLimiter<SlidingWindowLogRule>>("DirectLimiter<SlidingWindowLogRule>");
}

#[test]
fn keyed_limiters_fill_whole_lines() {
    fills_whole_lines::<TokenBucket>("TokenBucket<String>");
    fills_whole_lines::<TokenBucket<u64>>("TokenBucket<u64>");
    fills_whole_lines::<FixedWindow>("FixedWindow<String>");
    fills_whole_lines::<SlidingWindowCounter>("SlidingWindowCounter<String>");
    fills_whole_lines::<SlidingWindowLog>("SlidingWindowLog<String>");
}
