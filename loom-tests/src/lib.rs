//! Shared pieces of the `loom` models of tollgate's concurrent state
//! machines; the models themselves live in `tests/`, one file per concept.
//!
//! Everything here exists only when built with `--cfg tollgate_loom`, which
//! also switches tollgate's atomics and locks to `loom`'s:
//!
//! ```text
//! RUSTFLAGS="--cfg tollgate_loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --manifest-path loom-tests/Cargo.toml
//! ```
//!
//! * [`explore`]: runs one model under its documented preemption bound.
//! * [`RecordingClock`]: a manual clock that remembers, per model thread,
//!   the reading a limiter last took, so each decision is paired with the
//!   time it was made at.
//! * [`serial`]: checks that a set of per-thread histories is explained by
//!   some serial order of the same calls against a reference model.
//! * [`reference`]: reference models of the four rules, written from their
//!   documented semantics.
//! * [`scenarios`]: the spending scenarios several test files share.

#[cfg(tollgate_loom)]
mod explore;
#[cfg(tollgate_loom)]
mod recording_clock;
#[cfg(tollgate_loom)]
pub mod reference;
#[cfg(tollgate_loom)]
pub mod scenarios;
#[cfg(tollgate_loom)]
pub mod serial;

#[cfg(tollgate_loom)]
pub use explore::{Bound, explore};
#[cfg(tollgate_loom)]
pub use recording_clock::RecordingClock;
