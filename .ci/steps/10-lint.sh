#!/usr/bin/env bash
# Formatting, clippy with warnings denied, and docs with warnings denied.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo fmt --all --check
cargo clippy --all-targets --all-features -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --all-features
# Default features too: a link to a feature-gated item breaks only there.
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps
# Private items too: the internal modules' docs (state tables, packed
# words, orderings) are where their links live.
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --all-features --document-private-items
