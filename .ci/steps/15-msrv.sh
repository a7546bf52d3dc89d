#!/usr/bin/env bash
# The library builds on the oldest Rust that Cargo.toml's `rust-version`
# names, with no feature, each feature alone and all of them, from the
# committed Cargo.lock. Only the library: the tests, examples and benches
# need the current stable (dev-dependencies such as parking_lot 0.13 ask
# for newer Rust). Installs that toolchain (minimal profile) when missing;
# if it cannot be fetched (offline), says so loudly and skips, unless
# TOLLGATE_REQUIRE_MSRV=1.
set -euo pipefail
cd "$(dirname "$0")/../.."
msrv=$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml)
if [ -z "$msrv" ]; then
    echo "Cargo.toml names no rust-version" >&2
    exit 1
fi
if ! rustup toolchain install "$msrv" --profile minimal; then
    echo "!!! MSRV check SKIPPED: Rust $msrv could not be installed" >&2
    if [ "${TOLLGATE_REQUIRE_MSRV:-0}" = 1 ]; then exit 1; fi
    exit 0
fi
# Its own target directory: another compiler's artifacts would only crowd
# the stable build's.
export CARGO_TARGET_DIR=target/msrv
# The features as Cargo.toml's [features] table names them, so a new one is
# checked without editing this list.
named=$(awk '/^\[features\]/ { in_table = 1; next }
                /^\[/ { in_table = 0 }
                in_table && /^[A-Za-z0-9_-]+ = / { print $1 }' Cargo.toml)
for feature in "" $named; do
    echo "Rust $msrv: the library with features [${feature}]"
    cargo "+$msrv" check --locked --lib --no-default-features --features "$feature"
done
echo "Rust $msrv: the library with every feature"
cargo "+$msrv" check --locked --lib --all-features
