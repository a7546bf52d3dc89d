//! Time sources: the [`Clock`] trait, the `quanta`-backed default and a
//! manual clock for tests.

use std::time::Duration;

use crate::sync::{Arc, AtomicU64, Ordering};

impl<C: Clock + ?Sized> Clock for std::sync::Arc<C> {
    #[inline]
    fn now_nanos(&self) -> u64 {
        (**self).now_nanos()
    }
}

/// A monotonic source of time, in nanoseconds since an arbitrary origin.
///
/// Limiters read the clock once per decision, before touching any state.
/// Readings must never decrease; if an implementation breaks that promise the
/// limiters stay safe (no panic, no overflow) and only ever become stricter,
/// never more lenient.
pub trait Clock: Send + Sync + 'static {
    /// Nanoseconds elapsed since this clock's origin.
    fn now_nanos(&self) -> u64;
}

impl<C: Clock + ?Sized> Clock for &'static C {
    #[inline]
    fn now_nanos(&self) -> u64 {
        (**self).now_nanos()
    }
}

/// The default clock: a calibrated TSC read through [`quanta`].
///
/// `quanta` reads the CPU's invariant time-stamp counter where it is reliable
/// and falls back to the OS monotonic clock where it is not; either way the
/// readings are monotonic and unaffected by wall-clock changes (NTP steps,
/// `settimeofday`), so adjusting the system time can neither add nor remove
/// tokens. The origin is the moment the clock was created.
#[derive(Clone, Debug)]
pub struct MonotonicClock {
    clock: quanta::Clock,
    origin: u64,
}

impl MonotonicClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        let clock = quanta::Clock::new();
        let origin = clock.raw();
        Self { clock, origin }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for MonotonicClock {
    #[inline]
    fn now_nanos(&self) -> u64 {
        // A raw counter read plus one multiply: cheaper than `Instant::now`.
        self.clock.delta_as_nanos(self.origin, self.clock.raw())
    }
}

/// A clock that moves only when told to; clones share one time.
///
/// Starts at zero. It is monotonic like every [`Clock`]: [`ManualClock::set`]
/// to an earlier time than the current one is ignored, and
/// [`ManualClock::advance`] saturates at `u64::MAX` nanoseconds.
#[derive(Clone, Debug, Default)]
pub struct ManualClock {
    nanos: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves the clock forward by `d` (saturating).
    pub fn advance(&self, d: Duration) {
        let step = duration_to_nanos(d);
        // Relaxed: the clock value is the only data; readers need no other memory.
        let _ = self
            .nanos
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |now| {
                Some(now.saturating_add(step))
            });
    }

    /// Sets the time since the origin; a time earlier than now is ignored.
    pub fn set(&self, since_origin: Duration) {
        // Relaxed: as in `advance`; fetch_max keeps the clock monotonic.
        self.nanos
            .fetch_max(duration_to_nanos(since_origin), Ordering::Relaxed);
    }

    /// The current time since the origin.
    pub fn elapsed(&self) -> Duration {
        Duration::from_nanos(self.now_nanos())
    }
}

impl Clock for ManualClock {
    #[inline]
    fn now_nanos(&self) -> u64 {
        // Relaxed: a limiter needs only some recent value, and the RMW
        // updates above are totally ordered on this one word.
        self.nanos.load(Ordering::Relaxed)
    }
}

/// `d` in nanoseconds, saturating at `u64::MAX` (about 584 years).
#[inline]
pub(crate) fn duration_to_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
