//! Time sources: the [`Clock`] trait, the `quanta`-backed default and a
//! manual clock for tests.

use std::time::Duration;

use std::sync::atomic::{AtomicU64 as StdAtomicU64, AtomicUsize as StdAtomicUsize};

use crossbeam_utils::CachePadded;

use crate::counter::Counter;
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
///
/// Two ways to read it:
///
/// * [`MonotonicClock::new`] (the default, and what `TokenBucket::new` and
///   the other `new` constructors use): each reading is the time a
///   [`ClockUpkeep`] thread last published (the counter, converted to
///   nanoseconds by the thread), a plain load and a subtraction. One such thread,
///   publishing every [`SHARED_UPKEEP_INTERVAL`], is shared by every default
///   clock in the process; it starts with the first and stops when the last
///   is dropped. Readings trail real time by a lag of up to the interval
///   (plus however long the thread waits to be scheduled). Each decision is
///   made as of a moment already past, so none is more lenient than an
///   exact one at that moment; but the lag varies, so a span `W` of real
///   time can cover up to `W` plus the largest lag of the limiter's time
///   (`docs/design.md`, "Time"). If the thread cannot be spawned, readings
///   are counter reads.
/// * [`MonotonicClock::exact`]: each reading is a counter read, exact to the
///   counter's resolution, and no thread is involved. That read costs
///   9-14 ns on the machines in `docs/benchmarks.md`: on one of them more
///   than the rest of a keyed `u64` decision together.
#[derive(Clone, Debug)]
pub struct MonotonicClock {
    /// The process's epoch, held so an exact reading need not look it up.
    epoch: &'static Epoch,
    /// This clock's origin, in nanoseconds since the epoch: what published
    /// times are read against.
    origin: u64,
    /// This clock's origin as a counter value: what an exact reading is
    /// scaled from, in one step, as the counter's own deltas are.
    origin_counter: u64,
    /// Keeps the shared upkeep running while this clock or a clone lives;
    /// `None` for an exact clock (or when the thread could not start).
    upkeep: Option<std::sync::Arc<ClockUpkeep>>,
}

/// The counter reading every clock in the process counts its nanoseconds
/// from, so the upkeep can publish nanoseconds once per tick instead of each
/// reading converting a counter value.
#[derive(Debug)]
struct Epoch {
    counter: Counter,
    start: u64,
}

impl Epoch {
    /// The process's epoch, fixed by the first clock or upkeep to ask.
    fn get() -> &'static Epoch {
        // Padded: exact readings read it on every decision, and a static the
        // linker puts beside it, written by another thread, would make each
        // of those reads a miss.
        static EPOCH: CachePadded<std::sync::OnceLock<Epoch>> =
            CachePadded::new(std::sync::OnceLock::new());
        EPOCH.get_or_init(|| {
            let counter = Counter::new();
            let start = counter.raw();
            Epoch { counter, start }
        })
    }

    /// Nanoseconds since the epoch, read from the counter now.
    fn nanos_now(&self) -> u64 {
        self.nanos_at(self.counter.raw())
    }

    /// Nanoseconds from the epoch to the counter value `counter`.
    fn nanos_at(&self, counter: u64) -> u64 {
        self.counter.delta_as_nanos(self.start, counter)
    }
}

/// Nanoseconds since the epoch, read from the counter: the default clock's
/// reading while no upkeep publishes.
#[cold]
#[inline(never)]
fn unpublished_nanos() -> u64 {
    Epoch::get().nanos_now()
}

/// How often the upkeep shared by default [`MonotonicClock`]s publishes.
pub const SHARED_UPKEEP_INTERVAL: Duration = Duration::from_millis(1);

impl MonotonicClock {
    /// A clock whose origin is now, read through the shared upkeep (see the
    /// type's docs).
    pub fn new() -> Self {
        Self::with_upkeep(shared_upkeep())
    }

    /// A clock whose origin is now and whose every reading is a counter
    /// read: exact, with no background thread, and dearer per reading.
    pub fn exact() -> Self {
        Self::with_upkeep(None)
    }

    fn with_upkeep(upkeep: Option<std::sync::Arc<ClockUpkeep>>) -> Self {
        let epoch = Epoch::get();
        let origin_counter = epoch.counter.raw();
        Self {
            epoch,
            origin: epoch.nanos_at(origin_counter),
            origin_counter,
            upkeep,
        }
    }

    /// Whether readings are counter reads ([`exact`](Self::exact)).
    pub fn is_exact(&self) -> bool {
        self.upkeep.is_none()
    }
}

/// The upkeep every default clock shares, started if none runs; `None` if
/// its thread cannot be spawned.
fn shared_upkeep() -> Option<std::sync::Arc<ClockUpkeep>> {
    static SHARED: std::sync::Mutex<std::sync::Weak<ClockUpkeep>> =
        std::sync::Mutex::new(std::sync::Weak::new());
    let mut shared = SHARED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(running) = shared.upgrade() {
        return Some(running);
    }
    let started = std::sync::Arc::new(ClockUpkeep::start(SHARED_UPKEEP_INTERVAL).ok()?);
    *shared = std::sync::Arc::downgrade(&started);
    Some(started)
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for MonotonicClock {
    #[inline]
    fn now_nanos(&self) -> u64 {
        if self.upkeep.is_none() {
            let counter = &self.epoch.counter;
            return counter.delta_as_nanos(self.origin_counter, counter.raw());
        }
        // Relaxed: the word is the whole message (a time), and per-location
        // coherence keeps one thread's readings from going back.
        let since_epoch = match PUBLISHED_NANOS.load(Ordering::Relaxed) {
            NOT_PUBLISHED => unpublished_nanos(),
            published => published,
        };
        // A load and a subtraction; the upkeep did the conversion. A clock
        // made after the last publication reads zero until the next one.
        since_epoch.saturating_sub(self.origin)
    }
}

/// The time, in nanoseconds since the [`Epoch`], that the running upkeep
/// threads last published, or [`NOT_PUBLISHED`] while none runs.
///
/// Padded to a line of its own: every default reading loads it, and an
/// unrelated static beside it that another thread writes (an allocator's
/// counters, a metric) would turn each of those loads into a miss, about
/// three times a keyed decision's cost (`docs/benchmarks.md`, levers).
static PUBLISHED_NANOS: CachePadded<StdAtomicU64> =
    CachePadded::new(StdAtomicU64::new(NOT_PUBLISHED));

/// Upkeep threads that may still publish.
static UPKEEP_THREADS: StdAtomicUsize = StdAtomicUsize::new(0);

/// No time is published: read the counter.
const NOT_PUBLISHED: u64 = 0;

/// A background thread that publishes the time (the counter, converted to
/// nanoseconds) every `interval`, making
/// default [`MonotonicClock`] readings a plain load; stops at once (and
/// readings go back to counter reads unless another upkeep runs) when
/// dropped.
///
/// Default clocks keep one running at [`SHARED_UPKEEP_INTERVAL`]; start one
/// yourself for a shorter interval (readings follow the latest value any
/// upkeep published). Never needed for correctness. While it runs, readings
/// trail real time by up to `interval` plus however long the thread waits to
/// be scheduled (see [`MonotonicClock`] for what that lag means for a
/// limit). Just after an upkeep starts, a reading can
/// trail one taken an instant earlier by the gap between the upkeep's
/// counter read and its store (normally far under a microsecond); limiters
/// treat a reading that moved back as no time passing. Several
/// upkeeps may run; readings follow the latest value any of them published.
///
/// ```
/// use std::time::Duration;
/// use tollgate::{ClockUpkeep, Quota, RateLimiter, TokenBucket};
///
/// let _upkeep = ClockUpkeep::start(Duration::from_millis(1))?;
/// let limiter: TokenBucket = TokenBucket::new(Quota::per_second(100));
/// assert!(limiter.allow("client"));
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct ClockUpkeep {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ClockUpkeep {
    /// Starts publishing every `interval` (at least one microsecond) and
    /// returns once the first value is published; fails only if the thread
    /// cannot be spawned.
    pub fn start(interval: Duration) -> std::io::Result<ClockUpkeep> {
        let interval = interval.max(Duration::from_micros(1));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        // Relaxed: counted before the thread exists, so the last `drop`
        // cannot see zero while this thread may still publish.
        UPKEEP_THREADS.fetch_add(1, Ordering::Relaxed);
        let flag = std::sync::Arc::clone(&stop);
        let (ready, published) = std::sync::mpsc::sync_channel(1);
        let spawned = std::thread::Builder::new()
            .name("tollgate-clock-upkeep".into())
            .spawn(move || {
                let epoch = Epoch::get();
                let mut ready = Some(ready);
                // Relaxed: the flag carries no data; `join` orders the exit.
                while !flag.load(Ordering::Relaxed) {
                    // Relaxed: the value is self-contained; fetch_max keeps
                    // the published time monotonic across upkeeps.
                    PUBLISHED_NANOS.fetch_max(epoch.nanos_now().max(1), Ordering::Relaxed);
                    if let Some(ready) = ready.take() {
                        let _ = ready.send(());
                    }
                    // Parked rather than asleep, so `drop` can wake it.
                    std::thread::park_timeout(interval);
                }
            });
        match spawned {
            Ok(thread) => {
                // An error means the thread is gone, and readings fall back
                // to the counter, which is still correct.
                let _ = published.recv();
                Ok(ClockUpkeep {
                    stop,
                    thread: Some(thread),
                })
            }
            Err(error) => {
                retire_upkeep_thread();
                Err(error)
            }
        }
    }
}

impl Drop for ClockUpkeep {
    fn drop(&mut self) {
        // Relaxed: `unpark` below makes the store visible to the woken
        // thread, and a late sight of it only costs one more tick.
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            // The thread never panics; joining makes its last publication
            // happen before the count drops below.
            let _ = thread.join();
        }
        retire_upkeep_thread();
    }
}

/// One upkeep thread has stopped; the last one withdraws the published
/// value so readings go back to the counter instead of freezing.
fn retire_upkeep_thread() {
    // Relaxed: the joined thread's stores are ordered by `join`; a racing
    // `start` that counts itself first keeps the value published, and one
    // that counts itself after republishes on its first tick.
    if UPKEEP_THREADS.fetch_sub(1, Ordering::Relaxed) == 1 {
        PUBLISHED_NANOS.store(NOT_PUBLISHED, Ordering::Relaxed);
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
