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
