//! [`Quota`]: how many units a key may spend per window.

use std::fmt;
use std::time::Duration;

/// A rate: `limit` units per `window`, with a token-bucket capacity `burst`.
///
/// The window algorithms admit at most `limit` units per `window`; the token
/// bucket refills at `limit / window` and holds at most `burst` units
/// (by default `burst == limit`).
///
/// ```
/// use std::time::Duration;
/// use tollgate::Quota;
///
/// let q: Quota = "100/minute".parse()?;
/// assert_eq!(q, Quota::per_minute(100));
/// assert_eq!(q.window(), Duration::from_secs(60));
/// let q = Quota::new(5, Duration::from_secs(30))?.with_burst(10);
/// assert_eq!((q.limit(), q.burst()), (5, 10));
/// # Ok::<(), tollgate::QuotaError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Quota {
    limit: u64,
    window_nanos: u64,
    burst: u64,
}

impl Quota {
    /// `limit` units per `window`.
    ///
    /// Errors when `limit` or `window` is zero, or when `window` does not fit
    /// in `u64` nanoseconds (about 584 years).
    pub fn new(limit: u64, window: Duration) -> Result<Quota, QuotaError> {
        if limit == 0 {
            return Err(QuotaError::ZeroLimit);
        }
        if window.is_zero() {
            return Err(QuotaError::ZeroWindow);
        }
        let window_nanos =
            u64::try_from(window.as_nanos()).map_err(|_| QuotaError::WindowTooLong)?;
        Ok(Quota {
            limit,
            window_nanos,
            burst: limit,
        })
    }

    /// `limit` units per second.
    ///
    /// # Panics
    /// When `limit` is zero; use [`Quota::new`] for a fallible constructor.
    pub fn per_second(limit: u64) -> Quota {
        Self::fixed(limit, Duration::from_secs(1))
    }

    /// `limit` units per minute.
    ///
    /// # Panics
    /// When `limit` is zero; use [`Quota::new`] for a fallible constructor.
    pub fn per_minute(limit: u64) -> Quota {
        Self::fixed(limit, Duration::from_secs(60))
    }

    /// `limit` units per hour.
    ///
    /// # Panics
    /// When `limit` is zero; use [`Quota::new`] for a fallible constructor.
    pub fn per_hour(limit: u64) -> Quota {
        Self::fixed(limit, Duration::from_secs(3600))
    }

    fn fixed(limit: u64, window: Duration) -> Quota {
        match Self::new(limit, window) {
            Ok(quota) => quota,
            Err(error) => panic!("invalid quota: {error}"),
        }
    }

    /// Sets the token bucket's capacity (the largest burst).
    ///
    /// # Panics
    /// When `burst` is zero; use [`Quota::try_with_burst`] to get an error.
    pub fn with_burst(self, burst: u64) -> Quota {
        match self.try_with_burst(burst) {
            Ok(quota) => quota,
            Err(error) => panic!("invalid quota: {error}"),
        }
    }

    /// Sets the token bucket's capacity; errors when `burst` is zero.
    pub fn try_with_burst(self, burst: u64) -> Result<Quota, QuotaError> {
        if burst == 0 {
            return Err(QuotaError::ZeroBurst);
        }
        Ok(Quota { burst, ..self })
    }

    /// Units admitted per window.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The window length.
    pub fn window(&self) -> Duration {
        Duration::from_nanos(self.window_nanos)
    }

    /// The window length in nanoseconds.
    pub fn window_nanos(&self) -> u64 {
        self.window_nanos
    }

    /// The token bucket's capacity.
    pub fn burst(&self) -> u64 {
        self.burst
    }
}

impl fmt::Display for Quota {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} per {:?}", self.limit, self.window())?;
        if self.burst != self.limit {
            write!(f, " (burst {})", self.burst)?;
        }
        Ok(())
    }
}

/// Why a [`Quota`] could not be built or parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum QuotaError {
    /// The limit was zero: nothing could ever pass.
    ZeroLimit,
    /// The window was zero long.
    ZeroWindow,
    /// The window does not fit in `u64` nanoseconds (about 584 years).
    WindowTooLong,
    /// The burst (bucket capacity) was zero.
    ZeroBurst,
    /// The text had no limit before the separator, e.g. `"/minute"`.
    MissingLimit {
        /// The whole text.
        input: String,
    },
    /// The text had no `/` or `per` between limit and window, e.g. `"100"`.
    MissingSeparator {
        /// The whole text.
        input: String,
    },
    /// The limit was not a whole number that fits in `u64`.
    InvalidLimit {
        /// The part read as the limit.
        text: String,
    },
    /// The window's count was not a whole number that fits in `u64`.
    InvalidWindowCount {
        /// The part read as the count.
        text: String,
    },
    /// The text had no time unit after the separator, e.g. `"100/"`.
    MissingUnit {
        /// The whole text.
        input: String,
    },
    /// The time unit was not one of ns, us, ms, s, m, h, d and their long names.
    UnknownUnit {
        /// The unit as written.
        unit: String,
    },
}

impl fmt::Display for QuotaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuotaError::ZeroLimit => f.write_str("the limit must be at least 1"),
            QuotaError::ZeroWindow => f.write_str("the window must be longer than zero"),
            QuotaError::WindowTooLong => {
                f.write_str("the window must fit in u64 nanoseconds (about 584 years)")
            }
            QuotaError::ZeroBurst => f.write_str("the burst must be at least 1"),
            QuotaError::MissingLimit { input } => {
                write!(
                    f,
                    "no limit before the separator in {input:?} (expected e.g. \"100/minute\")"
                )
            }
            QuotaError::MissingSeparator { input } => write!(
                f,
                "no '/' or 'per' between limit and window in {input:?} (expected e.g. \"100/minute\")"
            ),
            QuotaError::InvalidLimit { text } => {
                write!(
                    f,
                    "the limit {text:?} is not a whole number from 1 to {}",
                    u64::MAX
                )
            }
            QuotaError::InvalidWindowCount { text } => {
                write!(
                    f,
                    "the window count {text:?} is not a whole number from 1 to {}",
                    u64::MAX
                )
            }
            QuotaError::MissingUnit { input } => {
                write!(
                    f,
                    "no time unit after the separator in {input:?} (expected e.g. \"s\", \"minute\")"
                )
            }
            QuotaError::UnknownUnit { unit } => write!(
                f,
                "unknown time unit {unit:?} (use ns, us, ms, s, m, h, d or second, minute, hour, day)"
            ),
        }
    }
}

impl std::error::Error for QuotaError {}
