#!/usr/bin/env bash
# Runs every check and test. Installs what the tests need when it is missing
# (HAProxy from Debian, cargo-nextest from crates.io), so it works on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:/usr/local/sbin"

if ! command -v haproxy >/dev/null; then
  SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy
fi
command -v cargo-nextest >/dev/null || cargo install --locked cargo-nextest

cargo fmt --all -- --check
cargo clippy --locked --all-targets -- -D warnings
cargo nextest run --locked --workspace --no-fail-fast

# The benchmarks, once each at 1k services on the debug build (criterion's test mode, and
# one pass of the decoding benchmark), so that they cannot rot. Their figures come from
# release builds on a quiet machine: scripts/bench-*.sh and docs/performance.md.
bench_dir="$(mktemp -d)"
trap 'rm -rf "$bench_dir"' EXIT
cargo run --locked --quiet -p test-support --bin synth-cluster -- 1000 "$bench_dir/synth"
PORTCULLIS_BENCH_SIZES=1000 PORTCULLIS_DECODE_DIR="$bench_dir/synth" PORTCULLIS_DECODE_RUNS=1 \
  cargo test --locked -p portcullis -p resources --bench reconcile --bench decode

# The fuzz target (decode → convert → render, `haproxy -c` as the oracle) for a bounded
# time. cargo-fuzz needs the nightly toolchain; without one the fuzz run is skipped,
# saying so (the property test `adversarial` covers the same oracle on stable).
FUZZ_SECONDS="${PORTCULLIS_FUZZ_SECONDS:-60}"
if rustup run nightly rustc --version >/dev/null 2>&1; then
  command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
  corpus="$(mktemp -d)"
  trap 'rm -rf "$corpus" "$bench_dir"' EXIT
  (cd fuzz && cargo +nightly fuzz run pipeline --dev -s none --target-dir ../target/fuzz \
    "$corpus" corpus/pipeline -- -max_total_time="$FUZZ_SECONDS" -timeout=20 -rss_limit_mb=4096)
else
  echo "no nightly toolchain: the fuzz target is not run (cargo-fuzz needs one)" >&2
fi
