//! [`RecordingClock`]: a [`ManualClock`] that remembers each thread's last
//! reading.

use std::cell::Cell;
use std::time::Duration;

use tollgate::{Clock, ManualClock};

loom::thread_local! {
    /// The reading the current model thread's last clock call returned.
    static LAST_READING: Cell<Option<u64>> = Cell::new(None);
}

/// A shared manual clock that the model moves explicitly.
///
/// Limiters read the clock exactly once per decision, so the reading a
/// thread's last call returned is the time its last decision was made at.
/// Create it inside the model: the [`ManualClock`] under it holds `loom`
/// atomics when built with `--cfg tollgate_loom`.
#[derive(Clone, Debug, Default)]
pub struct RecordingClock {
    clock: ManualClock,
}

impl RecordingClock {
    /// A clock at `start` since its origin.
    pub fn at(start: Duration) -> Self {
        let clock = ManualClock::new();
        clock.set(start);
        RecordingClock { clock }
    }

    /// Moves the clock to `since_origin` (never backwards).
    pub fn set(&self, since_origin: Duration) {
        self.clock.set(since_origin);
    }

    /// Moves the clock forward by `d`.
    pub fn advance(&self, d: Duration) {
        self.clock.advance(d);
    }

    /// Takes the reading this thread's last clock call returned.
    ///
    /// Panics if this thread has not read the clock since the last take,
    /// which would mean a decision was made without reading the time.
    pub fn take_last_reading() -> u64 {
        LAST_READING
            .with(Cell::take)
            .expect("model setup error: a decision was made without a clock reading")
    }
}

impl Clock for RecordingClock {
    fn now_nanos(&self) -> u64 {
        let now = self.clock.now_nanos();
        LAST_READING.with(|last| last.set(Some(now)));
        now
    }
}
