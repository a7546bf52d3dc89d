//! A table entry published to a lookup that takes no lock, on the table
//! itself (`tollgate::loom_table::Table`, exported only under the cfg).
//!
//! The writer runs on the main thread, after spawning the lookup: `loom`'s
//! first schedule then runs the whole `put` before the lookup, whose load
//! of the tag word sees the new tag, so its read of the entry is checked
//! against the write. With the tag word's release store weakened to
//! relaxed, or the lookup's acquire load, the model reports a causality
//! violation. (`publication.rs`, through the public API, cannot: its first
//! schedule runs the lookup before the writer, whose own load of the tag
//! word then hides that lookup from `loom`'s search; see
//! `docs/verification.md`.)
#![cfg(tollgate_loom)]

use loom::sync::Arc;
use loom::thread;
use tollgate::loom_table::Table;
use tollgate_loom_tests::{Bound, explore};

#[test]
fn a_lookup_sees_a_new_entry_whole_or_not_at_all() {
    explore(Bound::Exhaustive, || {
        let table: Arc<Table<u64, u64>> = Arc::new(Table::with_capacity(2));
        let lookup = {
            let table = Arc::clone(&table);
            thread::spawn(move || {
                // Loom checks this read of the entry against its write.
                if let Some(state) = table.find(7, &7) {
                    assert_eq!(*state, 70, "model violation: a torn entry");
                }
            })
        };
        // SAFETY: the main thread is the table's only writer.
        #[allow(unsafe_code)]
        let state = unsafe { table.put(7, 7, 70) };
        assert_eq!(*state, 70);
        lookup.join().expect("the lookup panicked");
        assert_eq!(table.find(7, &7), Some(&70), "model violation: entry lost");
    });
}
