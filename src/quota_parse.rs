//! Parsing quotas from text: `"100/minute"`, `"10/s"`, `"5 per 30 seconds"`.

use std::str::FromStr;
use std::time::Duration;

use crate::quota::{Quota, QuotaError};

/// Accepts `<limit> ("/" | "per") [<count>] <unit>`, case-insensitive, with
/// any spacing: `"100/minute"`, `"10/s"`, `"5 per 30 seconds"`, `"1000/5m"`.
///
/// Units: `ns`, `us`/`µs`, `ms`, `s`/`sec`/`second`, `m`/`min`/`minute`,
/// `h`/`hr`/`hour`, `d`/`day`, with an optional plural `s` on long names.
impl FromStr for Quota {
    type Err = QuotaError;

    fn from_str(input: &str) -> Result<Quota, QuotaError> {
        let text = input.trim().to_ascii_lowercase();
        let (limit_text, window_text) =
            split_separator(&text).ok_or_else(|| QuotaError::MissingSeparator {
                input: input.to_owned(),
            })?;
        if limit_text.is_empty() {
            return Err(QuotaError::MissingLimit {
                input: input.to_owned(),
            });
        }
        let limit = parse_count(limit_text).ok_or_else(|| QuotaError::InvalidLimit {
            text: limit_text.to_owned(),
        })?;
        let digits_end = window_text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(window_text.len());
        let (count_text, unit_text) = window_text.split_at(digits_end);
        let count = if count_text.is_empty() {
            1
        } else {
            parse_count(count_text).ok_or_else(|| QuotaError::InvalidWindowCount {
                text: count_text.to_owned(),
            })?
        };
        let unit_text = unit_text.trim();
        if unit_text.is_empty() {
            return Err(QuotaError::MissingUnit {
                input: input.to_owned(),
            });
        }
        let unit_nanos = unit_nanos(unit_text).ok_or_else(|| QuotaError::UnknownUnit {
            unit: unit_text.to_owned(),
        })?;
        let window_nanos = count
            .checked_mul(unit_nanos)
            .ok_or(QuotaError::WindowTooLong)?;
        Quota::new(limit, Duration::from_nanos(window_nanos))
    }
}

/// Splits at the first `/` or the word `per`.
fn split_separator(text: &str) -> Option<(&str, &str)> {
    if let Some((limit, window)) = text.split_once('/') {
        return Some((limit.trim(), window.trim()));
    }
    let at = text.find("per")?;
    let (limit, rest) = text.split_at(at);
    Some((limit.trim(), rest["per".len()..].trim()))
}

/// A whole number; `None` for signs, fractions or overflow (zero is left to
/// [`Quota::new`], which names it).
fn parse_count(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u64>().ok()
}

fn unit_nanos(unit: &str) -> Option<u64> {
    const SECOND: u64 = 1_000_000_000;
    let nanos = match unit {
        "ns" | "nanosecond" | "nanoseconds" => 1,
        "us" | "µs" | "microsecond" | "microseconds" => 1_000,
        "ms" | "millisecond" | "milliseconds" => 1_000_000,
        "s" | "sec" | "secs" | "second" | "seconds" => SECOND,
        "m" | "min" | "mins" | "minute" | "minutes" => 60 * SECOND,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3_600 * SECOND,
        "d" | "day" | "days" => 86_400 * SECOND,
        _ => return None,
    };
    Some(nanos)
}
