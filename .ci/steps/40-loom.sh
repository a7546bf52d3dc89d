#!/usr/bin/env bash
# Loom models of every CAS loop and lock protocol (loom-tests/, see
# docs/verification.md): formatting, clippy, then the README's loom command.
# Each model's preemption bound is set in its test; LOOM_MAX_PREEMPTIONS,
# if set, overrides them all, and TOLLGATE_LOOM_EXHAUSTIVE=1 lifts them.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo fmt --manifest-path loom-tests/Cargo.toml --check
export RUSTFLAGS="--cfg tollgate_loom"
export CARGO_TARGET_DIR=target/loom
cargo clippy --release --all-targets --manifest-path loom-tests/Cargo.toml -- -D warnings
cargo test --release --manifest-path loom-tests/Cargo.toml
