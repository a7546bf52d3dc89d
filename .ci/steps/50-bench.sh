#!/usr/bin/env bash
# Benchmarks build, and the comparison runs briefly with its correctness
# checks (allowed paths admit everything, saturated keys admit what the
# quota allows, memory is measured). No timing is asserted.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo bench --no-run
cargo run --release --example compare -- --quick
