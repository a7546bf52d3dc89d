#!/usr/bin/env bash
# Benchmarks build, and the comparison runs briefly with its correctness
# checks (allowed paths admit everything, saturated keys admit what the
# quota allows, memory is measured), through the script that summarises
# runs, which fails if it finds no targets table. The registry's cost
# example runs once with every client assigned to one tier and once with
# clients split over both (every request must be admitted, every client on
# its tier). The profiling loop and the cache-pressure and stretches
# examples run briefly, each failing if a generous quota denied a request.
# No timing is asserted.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo bench --no-run
COMPARE_RUNS_DIR=target/compare-runs benches/compare_runs.sh 1 --quick
cat target/compare-runs/run1.md
cargo run --release --example registry_cost -- assigned
cargo run --release --example registry_cost -- mixed
for case in string u64 floor; do
    cargo run --release --example hit_loop -- "$case" 100000
done
cargo run --release --example cache_pressure -- 8 1 1000
cargo run --release --example stretches -- 1 1000
