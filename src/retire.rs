//! [`Retire`]: how the keyed store takes a per-key state out of service.
//!
//! Lookups in a keyed limiter take no lock, so the store cannot stop a
//! request from reaching a state it is about to drop or move. Instead it
//! *retires* the state first, with one atomic step that requests observe:
//! a retired state refuses every later update (the update reports `None`),
//! and the request looks its key up again under the shard's lock, where it
//! finds the key's live state or starts a fresh one. A state is retired
//!
//! * by a sweep, only while it equals a fresh state (so dropping it changes
//!   no decision), and
//! * by a table rebuild, which moves its contents to the new table.
//!
//! Both run under the shard's lock, and only the lock holder brings a
//! retired state back ([`revive`](Retire::revive)).

/// A per-key state the keyed store can retire, move and revive.
///
/// Implemented by [`PackedWord`](crate::PackedWord) (a reserved word value
/// marks it retired) and [`LogState`](crate::LogState) (a bit set under
/// its lock and read without it). A custom [`Algorithm`](crate::Algorithm) whose state is neither
/// implements it so that its `check` returns `None` on a retired state.
pub trait Retire: Sized {
    /// Whether the state is retired now.
    fn is_retired(&self) -> bool;

    /// Retires the state if it is live and `idle` holds for its current
    /// contents, atomically with respect to updates; true if it did.
    fn retire_if(&self, idle: impl Fn(&Self) -> bool) -> bool;

    /// Retires a live state and returns its contents as a new live state;
    /// `None` if it was already retired.
    fn retire_and_take(&self) -> Option<Self>;

    /// Makes a retired state live again with the contents of `fresh`.
    fn revive(&self, fresh: Self);
}
