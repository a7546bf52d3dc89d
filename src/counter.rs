//! [`Counter`]: the time counter the default clock reads.
//!
//! Normally `quanta`'s clock (the calibrated TSC, or the OS clock where the
//! TSC is unreliable). Miri cannot run `quanta`'s detection (`cpuid`) or its
//! counter read, so under Miri the counter is `std`'s monotonic clock in
//! nanoseconds: the limiters, the upkeep thread and every test that uses
//! the default clock then run under Miri unchanged.

/// The default clock's counter.
#[cfg(not(miri))]
pub(crate) type Counter = quanta::Clock;

/// The default clock's counter under Miri: nanoseconds since it was made.
#[cfg(miri)]
#[derive(Debug)]
pub(crate) struct Counter(std::time::Instant);

#[cfg(miri)]
impl Counter {
    /// A counter starting at zero now.
    pub(crate) fn new() -> Self {
        Counter(std::time::Instant::now())
    }

    /// The counter's value: nanoseconds since it was made.
    pub(crate) fn raw(&self) -> u64 {
        crate::clock::duration_to_nanos(self.0.elapsed())
    }

    /// Nanoseconds from `start` to `end`, two of this counter's values.
    pub(crate) fn delta_as_nanos(&self, start: u64, end: u64) -> u64 {
        end.saturating_sub(start)
    }
}
