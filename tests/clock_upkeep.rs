//! `ClockUpkeep`: readings stay monotonic while it runs, keep advancing
//! while it runs, and keep advancing (never freeze) once it stops.

use std::time::{Duration, Instant};

use tollgate::{Clock, ClockUpkeep, ManualClock, MonotonicClock, Quota, RateLimiter, TokenBucket};

/// Waits up to two seconds for `clock` to pass `reading`; the upkeep thread
/// may be starved for a while on a loaded machine, but not for that long.
fn advances_past(clock: &MonotonicClock, reading: u64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
        if clock.now_nanos() > reading {
            return true;
        }
    }
    false
}

#[test]
fn readings_advance_and_never_decrease_while_running() {
    let clock = MonotonicClock::new();
    let upkeep = ClockUpkeep::start(Duration::from_millis(1)).expect("spawn");
    let mut last = clock.now_nanos();
    for _ in 0..100_000 {
        let now = clock.now_nanos();
        assert!(now >= last, "reading went back from {last} to {now}");
        last = now;
    }
    assert!(
        advances_past(&clock, last),
        "time froze with the upkeep running"
    );
    drop(upkeep);
}

#[test]
fn readings_keep_advancing_after_the_upkeep_stops() {
    let clock = MonotonicClock::new();
    let upkeep = ClockUpkeep::start(Duration::from_millis(1)).expect("spawn");
    drop(upkeep);
    let stopped_at = clock.now_nanos();
    assert!(
        advances_past(&clock, stopped_at),
        "time froze after the upkeep stopped"
    );
}

#[test]
fn stopping_one_of_two_upkeeps_keeps_time_moving() {
    let clock = MonotonicClock::new();
    let first = ClockUpkeep::start(Duration::from_millis(1)).expect("spawn");
    let second = ClockUpkeep::start(Duration::from_millis(1)).expect("spawn");
    drop(first);
    let reading = clock.now_nanos();
    assert!(
        advances_past(&clock, reading),
        "time froze with one upkeep left"
    );
    drop(second);
    let reading = clock.now_nanos();
    assert!(advances_past(&clock, reading), "time froze with none left");
}

#[test]
// Under Miri's clock the first two calls lie far apart, so the bucket has
// refilled before the second.
#[cfg_attr(miri, ignore)]
fn a_limiter_refills_with_the_upkeep_running() {
    let _upkeep = ClockUpkeep::start(Duration::from_millis(1)).expect("spawn");
    // Two a second: one token every 500 ms, bucket of one. The interval is
    // long so that a thread descheduled between the first two calls does
    // not find the bucket refilled at the second.
    let limiter: TokenBucket = TokenBucket::new(Quota::per_second(2).with_burst(1));
    assert!(limiter.allow("k"));
    assert!(
        !limiter.allow("k"),
        "a bucket of one must be empty after one request"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut refilled = false;
    while Instant::now() < deadline && !refilled {
        std::thread::sleep(Duration::from_millis(5));
        refilled = limiter.allow("k");
    }
    assert!(refilled, "no token came back within ten seconds");
}

#[test]
fn the_manual_clock_ignores_the_upkeep() {
    let manual = ManualClock::new();
    let _upkeep = ClockUpkeep::start(Duration::from_millis(1)).expect("spawn");
    std::thread::sleep(Duration::from_millis(10));
    assert_eq!(manual.now_nanos(), 0);
}

#[test]
fn default_clocks_are_upkept_and_advance() {
    let first = MonotonicClock::new();
    let second = first.clone();
    let third = MonotonicClock::new();
    for clock in [&first, &second, &third] {
        assert!(!clock.is_exact(), "a default clock reads the counter");
        let reading = clock.now_nanos();
        assert!(advances_past(clock, reading), "a default clock froze");
    }
}

#[test]
fn an_exact_clock_reads_the_counter_every_time() {
    let clock = MonotonicClock::exact();
    assert!(clock.is_exact());
    // Readings that follow each other by far more than the shared upkeep's
    // interval would have to show it: each one is later than the last.
    let mut last = clock.now_nanos();
    for _ in 0..5 {
        let started = Instant::now();
        while started.elapsed() < Duration::from_micros(50) {}
        let now = clock.now_nanos();
        assert!(now > last, "an exact clock stood still at {last}");
        last = now;
    }
}

#[test]
fn a_default_clock_never_runs_ahead_of_an_exact_one_made_before_it() {
    // Made first, the exact clock's origin is the earlier one, and it reads
    // the counter after the upkeep last published: so it must read at least
    // as much, give or take the counters of two cores (a millisecond here).
    // Time published in counter ticks instead of nanoseconds would run ahead
    // by more than that within the 20 ms this watches.
    let exact = MonotonicClock::exact();
    let default = MonotonicClock::new();
    let slack = 1_000_000;
    let deadline = Instant::now() + Duration::from_secs(2);
    while default.now_nanos() < 20_000_000 && Instant::now() < deadline {
        let upkept = default.now_nanos();
        let read = exact.now_nanos();
        assert!(
            upkept <= read + slack,
            "the default clock read {upkept} ns, the exact one then {read} ns"
        );
    }
    assert!(
        default.now_nanos() >= 20_000_000,
        "the default clock did not reach 20 ms within two seconds"
    );
}
