//! [`LogEntries`]: one sliding log's admissions, oldest first, the first of
//! them kept inline.
//!
//! Many keys are seen once, or only within one instant: a client's first
//! request, a scanner, a burst that lands together. A `VecDeque` allocates a
//! buffer on its first push (freed again when the key goes), and for a new
//! log key that allocation was about a third of the first request's time
//! (`docs/benchmarks.md`, levers). So a log holds its one entry in the space
//! the queue's own header takes (the type is 32 bytes either way), and only
//! an admission at a second instant moves the entries to a queue:
//!
//! | variant          | holds                                              |
//! |------------------|----------------------------------------------------|
//! | `Empty`          | no entry, no buffer                                 |
//! | `One(entry)`     | one entry, no buffer                                |
//! | `Queue(entries)` | any number, in a buffer kept while it stays small   |
//!
//! No well-kept crate offers a deque that spills from inline storage to the
//! heap (`smallvec` has no deque); one inline entry in front of `std`'s
//! `VecDeque` needs none, and no `unsafe`.

use std::collections::VecDeque;

/// `(admitted at, units)`.
pub(crate) type Entry = (u64, u64);

/// A queue whose buffer holds more entries than this goes once it empties.
const KEPT_CAPACITY: usize = 64;

/// A new queue's room: the two entries that start it and two more, the
/// buffer `VecDeque`'s own first growth gives 16-byte entries.
const FIRST_CAPACITY: usize = 4;

/// One log's entries, oldest first (see the module docs).
#[derive(Debug, Default)]
pub(crate) enum LogEntries {
    /// No entry.
    #[default]
    Empty,
    /// Exactly one entry, without a buffer.
    One(Entry),
    /// Entries in a buffer (possibly none, while the buffer is kept).
    Queue(VecDeque<Entry>),
}

impl LogEntries {
    /// The oldest entry.
    pub(crate) fn front(&self) -> Option<Entry> {
        match self {
            LogEntries::Empty => None,
            LogEntries::One(entry) => Some(*entry),
            LogEntries::Queue(entries) => entries.front().copied(),
        }
    }

    /// The newest entry.
    pub(crate) fn back(&self) -> Option<Entry> {
        match self {
            LogEntries::Empty => None,
            LogEntries::One(entry) => Some(*entry),
            LogEntries::Queue(entries) => entries.back().copied(),
        }
    }

    /// The newest entry, to add units to.
    pub(crate) fn back_mut(&mut self) -> Option<&mut Entry> {
        match self {
            LogEntries::Empty => None,
            LogEntries::One(entry) => Some(entry),
            LogEntries::Queue(entries) => entries.back_mut(),
        }
    }

    /// Logs `entry` as the newest.
    pub(crate) fn push_back(&mut self, entry: Entry) {
        match self {
            LogEntries::Empty => *self = LogEntries::One(entry),
            LogEntries::One(first) => {
                let mut entries = VecDeque::with_capacity(FIRST_CAPACITY);
                entries.push_back(*first);
                entries.push_back(entry);
                *self = LogEntries::Queue(entries);
            }
            LogEntries::Queue(entries) => entries.push_back(entry),
        }
    }

    /// Drops the oldest entry. A buffer left empty stays for the next
    /// entries unless it grew past [`KEPT_CAPACITY`].
    pub(crate) fn pop_front(&mut self) {
        match self {
            LogEntries::Empty => {}
            LogEntries::One(_) => *self = LogEntries::Empty,
            LogEntries::Queue(entries) => {
                entries.pop_front();
                if entries.is_empty() && entries.capacity() > KEPT_CAPACITY {
                    *self = LogEntries::Empty;
                }
            }
        }
    }

    /// The entries, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Entry> + '_ {
        let (one, queue) = match self {
            LogEntries::Empty => (None, None),
            LogEntries::One(entry) => (Some(*entry), None),
            LogEntries::Queue(entries) => (None, Some(entries.iter().copied())),
        };
        one.into_iter().chain(queue.into_iter().flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(entries: &LogEntries) -> Vec<Entry> {
        entries.iter().collect()
    }

    /// The first entry needs no buffer; a second moves both into one, in
    /// order.
    #[test]
    fn one_entry_stays_inline_and_two_share_a_queue() {
        let mut entries = LogEntries::default();
        assert_eq!(entries.back(), None);
        entries.push_back((10, 1));
        assert!(matches!(entries, LogEntries::One((10, 1))));
        entries.back_mut().unwrap().1 += 2;
        entries.push_back((20, 1));
        assert!(matches!(entries, LogEntries::Queue(_)));
        assert_eq!(all(&entries), vec![(10, 3), (20, 1)]);
        assert_eq!(entries.front(), Some((10, 3)));
        assert_eq!(entries.back(), Some((20, 1)));
    }

    /// Entries leave oldest first, down to empty, from either form.
    #[test]
    fn entries_leave_oldest_first() {
        let mut entries = LogEntries::default();
        entries.push_back((1, 1));
        entries.pop_front();
        assert!(matches!(entries, LogEntries::Empty));
        entries.pop_front();
        for at in 1..=3 {
            entries.push_back((at, 1));
        }
        entries.pop_front();
        assert_eq!(all(&entries), vec![(2, 1), (3, 1)]);
        entries.pop_front();
        entries.pop_front();
        assert_eq!(entries.front(), None);
        assert_eq!(all(&entries), vec![]);
    }

    /// A small buffer left empty is kept for the next entries; a large one
    /// is let go.
    #[test]
    fn an_emptied_buffer_is_kept_only_while_small() {
        let mut small = LogEntries::default();
        small.push_back((1, 1));
        small.push_back((2, 1));
        small.pop_front();
        small.pop_front();
        assert!(matches!(&small, LogEntries::Queue(q) if q.is_empty()));
        small.push_back((3, 1));
        assert!(matches!(&small, LogEntries::Queue(q) if q.len() == 1));

        let mut large = LogEntries::default();
        for at in 0..=KEPT_CAPACITY as u64 {
            large.push_back((at, 1));
        }
        for _ in 0..=KEPT_CAPACITY {
            large.pop_front();
        }
        assert!(matches!(large, LogEntries::Empty));
    }

    /// No larger than the queue it stands in for, so a log's state keeps
    /// its size.
    #[test]
    fn as_large_as_a_queue() {
        assert_eq!(
            std::mem::size_of::<LogEntries>(),
            std::mem::size_of::<VecDeque<Entry>>()
        );
    }
}
