//! Building and parsing quotas.

use std::time::Duration;

use tollgate::{Quota, QuotaError};

fn parse(text: &str) -> Quota {
    text.parse()
        .unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
}

fn quota(limit: u64, window: Duration) -> Quota {
    Quota::new(limit, window).unwrap()
}

#[test]
fn the_documented_forms_parse() {
    assert_eq!(parse("100/minute"), Quota::per_minute(100));
    assert_eq!(parse("10/s"), Quota::per_second(10));
    assert_eq!(parse("5 per 30 seconds"), quota(5, Duration::from_secs(30)));
    assert_eq!(parse("1000/5m"), quota(1000, Duration::from_secs(300)));
}

#[test]
fn case_and_spacing_do_not_matter() {
    for text in [
        "100/MINUTE",
        "100 / minute",
        "  100/Minute  ",
        "100/ 1 min",
        "100 PER minute",
        "100per1minute",
        "100 / 60s",
        "100/60 S",
    ] {
        assert_eq!(parse(text), Quota::per_minute(100), "{text:?}");
    }
}

#[test]
fn every_unit_has_its_length() {
    let cases = [
        ("1/ns", Duration::from_nanos(1)),
        ("1/nanoseconds", Duration::from_nanos(1)),
        ("1/us", Duration::from_micros(1)),
        ("1/µs", Duration::from_micros(1)),
        ("1/microsecond", Duration::from_micros(1)),
        ("1/ms", Duration::from_millis(1)),
        ("1/250milliseconds", Duration::from_millis(250)),
        ("1/sec", Duration::from_secs(1)),
        ("1/secs", Duration::from_secs(1)),
        ("1/second", Duration::from_secs(1)),
        ("1/m", Duration::from_secs(60)),
        ("1/mins", Duration::from_secs(60)),
        ("1/h", Duration::from_secs(3_600)),
        ("1/hr", Duration::from_secs(3_600)),
        ("1/2hrs", Duration::from_secs(7_200)),
        ("1/hour", Duration::from_secs(3_600)),
        ("1/d", Duration::from_secs(86_400)),
        ("1/7days", Duration::from_secs(7 * 86_400)),
    ];
    for (text, window) in cases {
        assert_eq!(parse(text), quota(1, window), "{text:?}");
    }
}

#[test]
fn parsed_quotas_have_burst_equal_to_limit() {
    let q = parse("7/s");
    assert_eq!(
        (q.limit(), q.burst(), q.window_nanos()),
        (7, 7, 1_000_000_000)
    );
}

#[test]
fn constructors_and_burst() {
    assert_eq!(Quota::per_hour(5).window(), Duration::from_secs(3_600));
    let q = Quota::per_second(5).with_burst(20);
    assert_eq!((q.limit(), q.burst()), (5, 20));
    assert_eq!(
        Quota::per_second(5).try_with_burst(0),
        Err(QuotaError::ZeroBurst)
    );
    assert_eq!(Quota::per_second(5).try_with_burst(1).unwrap().burst(), 1);
}

#[test]
fn display_names_the_rate_and_a_distinct_burst() {
    assert_eq!(Quota::per_second(5).to_string(), "5 per 1s");
    assert_eq!(
        Quota::per_second(5).with_burst(9).to_string(),
        "5 per 1s (burst 9)"
    );
}

#[test]
fn zero_arguments_of_the_panicking_constructors_panic() {
    assert!(std::panic::catch_unwind(|| Quota::per_second(0)).is_err());
    assert!(std::panic::catch_unwind(|| Quota::per_second(1).with_burst(0)).is_err());
}
