#!/usr/bin/env bash
# Miri over the tests that reach the crate's `unsafe`: the lock-free table
# entries (src/state_table.rs) and each thread's memo of its per-thread
# tables (src/per_thread.rs). Their unit tests and the store's, and the
# table-move, key, re-entrant call, registry and trait tests, with strict
# provenance. See docs/verification.md. Needs the nightly toolchain's
# `miri` and `rust-src` components; this step adds them. If they cannot
# be fetched (offline), it says so loudly and skips, unless
# TOLLGATE_REQUIRE_MIRI=1.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! rustup component add --toolchain nightly miri rust-src; then
    echo "!!! Miri SKIPPED: the nightly miri and rust-src components could not be installed" >&2
    if [ "${TOLLGATE_REQUIRE_MIRI:-0}" = 1 ]; then exit 1; fi
    exit 0
fi
strict="-Zmiri-strict-provenance"
export MIRIFLAGS="$strict"
cargo +nightly miri setup
# Every test binary is built first, so the two groups below never wait on
# each other's build.
cargo +nightly miri test --no-run --lib --test table_moves --test keys --test many_limiters --test reentrant_calls \
    --test registry --test limiter_trait

# Miri interprets on one thread, so the two groups run side by side, each
# into its own log, printed when both are done. They are split to take
# about as long each (docs/verification.md gives each part's time).
logs=$(mktemp -d)
(
    cargo +nightly miri test --test table_moves
    # The table's and the memo's own tests again under Tree Borrows, the
    # other aliasing model.
    MIRIFLAGS="$strict -Zmiri-tree-borrows" cargo +nightly miri test --lib -- state_table per_thread
    # The registry's assignment lookups, on the default clock (under Miri
    # it counts with `Instant`).
    cargo +nightly miri test --test registry
) >"$logs/tables" 2>&1 &
tables=$!
(
    cargo +nightly miri test --lib -- state_table store short_bytes tag_group per_thread
    cargo +nightly miri test --test keys --test many_limiters --test reentrant_calls
    # Limiters behind the trait, on the default clock as well.
    cargo +nightly miri test --test limiter_trait
) >"$logs/units" 2>&1 &
units=$!

failed=0
wait "$tables" || failed=1
wait "$units" || failed=1
cat "$logs/units" "$logs/tables"
rm -rf "$logs"
if [ "$failed" -ne 0 ]; then
    echo "Miri found a failure (logs above)" >&2
    exit 1
fi
