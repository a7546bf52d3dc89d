#!/usr/bin/env bash
# The README's main job: the demo example must run and decide.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo run --release --example demo
