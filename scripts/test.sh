#!/usr/bin/env bash
# The one test command (README "Quick start", and what CI runs): formatting, lints, build, the
# pinned external test peers (cached under target/peers), then every test in the workspace.
# Works on a fresh machine with only the Rust toolchain, Python 3 and Node/npm present.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*" >&2; }

step "cargo fmt --check"
cargo fmt --all -- --check
step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings
step "build the binaries"
cargo build --workspace --bins
step "install the test peers"
scripts/peers.sh
step "cargo test"
RELEVANCE_REQUIRE_EMBEDDINGS=1 cargo test --workspace
