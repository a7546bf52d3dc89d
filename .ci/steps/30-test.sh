#!/usr/bin/env bash
# The whole test suite: the README's test command.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo test --all-features
