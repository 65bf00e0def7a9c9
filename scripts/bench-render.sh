#!/usr/bin/env bash
# `portcullis render` on synthetic clusters, cold (nothing in the output directory), and
# `haproxy -c` on what it wrote: one table row per run.
#   bash scripts/bench-render.sh [SIZES...]     (default: 1000 10000 50000 100000)
# RUNS (default 3) runs per size. The clusters are written once to $SYNTH_DIR
# (default /tmp/portcullis-synth) and reused. BASELINE=path/to/an/older/portcullis
# runs that build too, alternating with this one run by run, so both see the same
# hour of a shared machine (rows `baseline` and `this`). A second table gives each size's
# and build's median with its range: on a shared machine one run tells little.
# GATEWAY_API=1 routes every service with an HTTPRoute instead of an Ingress
# (`synth-cluster --gateway-api`, written to $SYNTH_DIR/gateway-api-N).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:/usr/local/sbin"
SIZES=("${@:-1000 10000 50000 100000}")
read -r -a SIZES <<<"${SIZES[*]}"
RUNS=${RUNS:-3}
SYNTH_DIR=${SYNTH_DIR:-/tmp/portcullis-synth}
cargo build --quiet --release --bins
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
echo "date: $(date -u +%F) machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(haproxy -v | head -1 | cut -d' ' -f1-3)"
BUILDS=("this=target/release/portcullis")
[ -z "${BASELINE:-}" ] || BUILDS=("baseline=$BASELINE" "${BUILDS[@]}")
echo "| services | run | build | load | reconcile | write | wall | CPU (user + system) | peak RSS | haproxy -c | its peak RSS |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
SHAPE=()
PREFIX=""
[ -n "${GATEWAY_API:-}" ] && SHAPE=(--gateway-api) && PREFIX=gateway-api-
for n in "${SIZES[@]}"; do
  cluster="$SYNTH_DIR/$PREFIX$n"
  [ -d "$cluster" ] || target/release/synth-cluster "${SHAPE[@]}" "$n" "$cluster"
  for run in $(seq "$RUNS"); do
  for build in "${BUILDS[@]}"; do
    # Each run writes a directory of its own, all removed at the end: on a file system
    # without a journal (this machine's), creating a file scans past every inode freed in
    # the last minutes, so removing one run's files made the next run's writes 2-3x slower.
    render="$OUT/render-$n-$run-${build%%=*}"
    /usr/bin/time -f '%e %M %U %S' -o "$OUT/time" "${build#*=}" render \
      --manifests "$cluster" --out "$render" 2>"$OUT/log" >/dev/null
    read -r wall rss user system <"$OUT/time"
    cpu=$(awk -v u="$user" -v s="$system" 'BEGIN { printf "%.2f s", u + s }')
    # The timing log's durations (`390.52ms`, `1.2s`) in seconds.
    timing() {
      grep -o "$1=[0-9.]*[mµ]*s" "$OUT/log" | head -1 | cut -d= -f2 | awk '
        /µs$/ { sub(/µs$/, ""); printf "%.4f s", $0 / 1e6; next }
        /ms$/ { sub(/ms$/, ""); printf "%.3f s", $0 / 1e3; next }
        { sub(/s$/, ""); printf "%.2f s", $0 }'
    }
    (cd "$render" && /usr/bin/time -f '%e %M' -o "$OUT/check-time" \
      haproxy -c -q -f haproxy.cfg -f backends >/dev/null 2>&1) || echo "haproxy -c failed" >&2
    read -r check_wall check_rss <"$OUT/check-time"
    echo "| $n | $run | ${build%%=*} | $(timing loaded) | $(timing reconcile) | $(timing write) | ${wall} s | $cpu | $((rss / 1024)) MiB | ${check_wall} s | $((check_rss / 1024)) MiB |"
    echo "$n ${build%%=*} $wall $(timing reconcile | cut -d' ' -f1) $((rss / 1024))" >>"$OUT/runs"
  done
  done
done
# The median of a column of numbers, and its range: `median (lowest-highest)`.
summary() {
  sort -n | awk '{ v[NR] = $1 } END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%g (%g-%g)", m, v[1], v[NR] }'
}
echo
echo "| services | build | runs | wall, median (range) | reconcile, median (range) | peak RSS, median (range) |"
echo "| --- | --- | --- | --- | --- | --- |"
for n in "${SIZES[@]}"; do
  for build in "${BUILDS[@]}"; do
    rows=$(awk -v n="$n" -v b="${build%%=*}" '$1 == n && $2 == b' "$OUT/runs")
    echo "| $n | ${build%%=*} | $(wc -l <<<"$rows") | $(cut -d' ' -f3 <<<"$rows" | summary) s | $(cut -d' ' -f4 <<<"$rows" | summary) s | $(cut -d' ' -f5 <<<"$rows" | summary) MiB |"
  done
done
