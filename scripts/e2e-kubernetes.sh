#!/usr/bin/env bash
# Kubernetes mode at scale, without a cluster: N synthetic services (default 10000) are
# served by the protocol-level fake API server (`fake-apiserver`), and `portcullis run
# --kubeconfig` is timed from its start until `/readyz` answers 200 (every watcher has
# listed, the configuration is rendered, checked and HAProxy serves it); then its
# resident memory, at once and after a quiet minute's part; then the peak while every
# watcher lists everything again (the API server lost its history). Everything binds to
# 127.0.0.1; everything it starts is stopped by pid on exit. `CLUSTER=kubectl` serves the
# objects as a real cluster holds them (`synth-cluster --as-saved-by-kubectl`); `PODS=1`
# adds a Pod behind each endpoint (`--with-pods`), as a cluster holds it; `GATEWAY_API=1`
# routes every service with an HTTPRoute instead of an Ingress (`--gateway-api`);
# `PUBLISH=1` publishes an address (`--publish-address`), so every Ingress's status is
# written too.
set -euo pipefail
# A HAProxy left running (an earlier run's worker still finishing, health-checking
# thousands of servers) takes a core and skews every figure: refuse to measure beside one.
if pgrep -x haproxy >/dev/null; then
  echo "haproxy processes are running (pids $(pgrep -x haproxy | tr '\n' ' ')); stop them first" >&2
  exit 1
fi
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:/usr/local/sbin"
N=${1:-10000}
WORK=$(mktemp -d)
cargo build --quiet --release --bins
PIDS=()
trap 'kill -TERM "${PIDS[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
mkfifo "$WORK/control"
SHAPE=()
[ "${CLUSTER:-}" = kubectl ] && SHAPE=(--as-saved-by-kubectl)
[ -n "${PODS:-}" ] && SHAPE+=(--with-pods)
[ -n "${GATEWAY_API:-}" ] && SHAPE+=(--gateway-api)
FLAGS=()
[ -n "${PUBLISH:-}" ] && FLAGS+=(--publish-address 10.0.0.1)
target/release/fake-apiserver "${SHAPE[@]}" "$N" "$WORK" >"$WORK/url" <"$WORK/control" &
PIDS+=($!)
exec 3>"$WORK/control"
until [ -s "$WORK/url" ]; do sleep 0.1; done
echo "fake API server at $(cat "$WORK/url") holds $N services ($((3 * N)) objects${PODS:+ and a Pod behind each endpoint})"
start=$(date +%s.%N)
echo "portcullis run starts at $(date -u +%T.%N)"
RUST_LOG=info "${PORTCULLIS_BIN:-target/release/portcullis}" run --kubeconfig "$WORK/kubeconfig-bench" \
  --identity bench --state-dir "$WORK/state" --bind-address 127.0.0.1 \
  --http-port 18180 --https-port 18543 --admin-bind 127.0.0.1:18354 "${FLAGS[@]}" \
  2>"$WORK/log" >"$WORK/haproxy-stdout" &
PORTCULLIS=$!
PIDS+=("$PORTCULLIS")
until curl -fs http://127.0.0.1:18354/readyz >/dev/null; do
  kill -0 "$PORTCULLIS" 2>/dev/null || { cat "$WORK/log" >&2; exit 1; }
  sleep 0.02
done
echo "start to ready: $(echo "$(date +%s.%N) - $start" | bc) s"
curl -fs -o /dev/null -w "a request through HAProxy: %{http_code}\n" \
  -H "Host: svc-1.ns-1.example.test" http://127.0.0.1:18180/ || true
sleep 0.2
echo "its log line: $(grep -m1 'svc-1.ns-1\|GET / ' "$WORK/haproxy-stdout" | cut -c1-160)"
grep -E "every watcher has listed|configuration written|haproxy (started|reloaded)" "$WORK/log" |
  head -4 | cut -c12-220
rss() { awk '/VmRSS/ {print $2}' "/proc/$PORTCULLIS/status"; }
cpu() { awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$PORTCULLIS/stat"; }
echo "controller RSS at ready: $(( $(rss) / 1024 )) MiB"
cpu_at_ready=$(cpu)
sleep 20
now=$(rss)
echo "controller CPU time: $cpu_at_ready s at ready, $(cpu) s 20 s later"
echo "controller RSS 20 s later: $((now / 1024)) MiB, $((now * 1024 / N)) bytes per service"
echo "controller peak RSS: $(( $(awk '/VmHWM/ {print $2}' "/proc/$PORTCULLIS/status") / 1024 )) MiB"
# Status is written once HAProxy serves the configuration, several writes at a time.
writes=$(grep -c "status written" "$WORK/log" || true)
if [ "$writes" -gt 0 ]; then
  first=$(grep -m1 "status written" "$WORK/log" | sed 's/\x1b\[[0-9;]*m//g' | cut -d' ' -f1)
  last=$(grep "status written" "$WORK/log" | tail -1 | sed 's/\x1b\[[0-9;]*m//g' | cut -d' ' -f1)
  echo "status writes: $writes, from $(echo "$(date -d "$first" +%s.%N) - $start" | bc) s to $(echo "$(date -d "$last" +%s.%N) - $start" | bc) s after the start"
fi
# A relist of everything: the peak above the steady state is what the relist holds at
# once (the peak so far is reset first).
echo 5 >"/proc/$PORTCULLIS/clear_refs"
cpu_before=$(cpu)
echo relist >&3
# Until the controller has been idle for two seconds, five seconds at least (the watchers
# relist after a backoff) and two minutes at most. At 100k, HAProxy's failing health
# checks keep the controller busy relaying their log lines, so it may never be idle.
last=$cpu_before idle=0
for second in $(seq 120); do
  sleep 1
  now_cpu=$(cpu)
  if [ "$(echo "$now_cpu - $last < 0.05" | bc)" = 1 ]; then idle=$((idle + 1)); else idle=0; fi
  last=$now_cpu
  [ "$idle" -ge 2 ] && [ "$second" -ge 5 ] && break
done
echo "the relist cost the controller $(echo "$(cpu) - $cpu_before" | bc) s of CPU"
curl -fs -o /dev/null -w "after the relist, a request through HAProxy: %{http_code}\n" \
  -H "Host: svc-1.ns-1.example.test" http://127.0.0.1:18180/ || true
echo "controller peak RSS during the relist: $(( $(awk '/VmHWM/ {print $2}' "/proc/$PORTCULLIS/status") / 1024 )) MiB, RSS after it: $(( $(rss) / 1024 )) MiB"
