//! tollgate and governor's keyed limiter alone, taking turns on one shared
//! limiter each over 10,000 `String` keys: the two-thread target's ratio
//! without the rest of `compare` around it.
//!
//! ```text
//! cargo run --release --example two_contenders               # 2 threads, 100-ms turns
//! cargo run --release --example two_contenders -- 1 25       # 1 thread, 25-ms turns
//! ```
//!
//! Each contender gets two seconds in turns of the chosen length; the line
//! printed holds each one's median decisions per second over its turns and
//! their ratio. `docs/benchmarks-earlier.md` (the Zen 4 section) holds runs.

use std::process::ExitCode;
use std::time::Duration;

use tollgate::{RateLimiter, TokenBucket};

#[path = "../benches/support/mod.rs"]
mod support;

use support::args::count_arg;
use support::contenders::{Spec, governor_keyed};
use support::keys::string_keys;
use support::median::median;
use support::threads::run_for;

/// Time each contender runs in all, cut into turns.
const TOTAL: Duration = Duration::from_secs(2);

fn main() -> ExitCode {
    let (threads, turn_ms) = match (count_arg(1, 2, 1024), count_arg(2, 100, 2000)) {
        (Ok(threads), Ok(turn_ms)) => (threads as usize, turn_ms),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("two_contenders: {e} (arguments: threads, then turn length in ms)");
            return ExitCode::from(2);
        }
    };
    let keys = string_keys(10_000);
    let spec = Spec::DEEP_BUCKET;
    let tollgate: TokenBucket = TokenBucket::new(spec.tollgate());
    let governor = governor_keyed::<String>(spec);
    for key in &keys {
        // Track every key first: the turns time the hit path.
        let _ = tollgate.allow(key);
        let _ = governor.check_key(key);
    }
    let turn = Duration::from_millis(turn_ms);
    let turns = (TOTAL.as_millis() / turn.as_millis()).max(1);
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..turns {
        let run = run_for(threads, turn, &keys, |k| tollgate.allow(k));
        // A bucket of a billion tokens cannot run dry here.
        assert_eq!(run.admitted, run.decisions, "tollgate denied a request");
        ours.push(run.per_second() / 1e6);
        let run = run_for(threads, turn, &keys, |k| governor.check_key(k).is_ok());
        assert_eq!(run.admitted, run.decisions, "governor denied a request");
        theirs.push(run.per_second() / 1e6);
    }
    let (ours, theirs) = (median(&mut ours), median(&mut theirs));
    println!(
        "{threads} threads, {turn_ms}-ms turns: tollgate {ours:.2} M/s, governor keyed {theirs:.2} M/s, ratio {:.3}x",
        ours / theirs
    );
    ExitCode::SUCCESS
}
