#!/usr/bin/env bash
# Miri over the tests that reach the crate's `unsafe`: the lock-free table
# entries (src/state_table.rs) and each thread's memo of its per-thread
# tables (src/per_thread.rs). Their unit tests and the store's, and the
# table-move and key tests, with strict provenance. See
# docs/verification.md. Needs the nightly toolchain's `miri` and `rust-src`
# components; this step adds them. If they cannot be fetched (offline), it
# says so loudly and skips, unless TOLLGATE_REQUIRE_MIRI=1.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! rustup component add --toolchain nightly miri rust-src; then
    echo "!!! Miri SKIPPED: the nightly miri and rust-src components could not be installed" >&2
    if [ "${TOLLGATE_REQUIRE_MIRI:-0}" = 1 ]; then exit 1; fi
    exit 0
fi
export MIRIFLAGS="-Zmiri-strict-provenance"
cargo +nightly miri setup
cargo +nightly miri test --lib -- state_table store short_bytes tag_group per_thread
cargo +nightly miri test --test table_moves --test keys --test many_limiters
# The table's and the memo's own tests again under Tree Borrows, the other
# aliasing model.
MIRIFLAGS="-Zmiri-strict-provenance -Zmiri-tree-borrows" cargo +nightly miri test --lib -- state_table per_thread
