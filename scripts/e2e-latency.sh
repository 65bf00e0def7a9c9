#!/usr/bin/env bash
# Measures, at N synthetic services (default 10000), the time from a manifest edit to
# traffic through HAProxy for three changes: one service pointed at a new endpoint
# (runtime API), a new route to it (runtime API, map update), and a new service (reload);
# and the controller's peak memory. Everything binds to 127.0.0.1; everything it starts is
# stopped by pid on exit.
# ENDPOINTS=refusing puts the synthetic endpoints where a connection is refused at once, so
# HAProxy's health checks cost about what they cost against pods that answer; by default
# they are addresses that never answer, and each of the 30k checks at 10k services waits
# out its timeout, which keeps HAProxy's workers busy.
set -euo pipefail
# A HAProxy left running (an earlier run's worker still finishing, health-checking
# thousands of servers) takes a core and skews every figure: refuse to measure beside one.
if pgrep -x haproxy >/dev/null; then
  echo "haproxy processes are running (pids $(pgrep -x haproxy | tr '\n' ' ')); stop them first" >&2
  exit 1
fi
cd "$(dirname "$0")/.."
N=${1:-10000}
WORK=$(mktemp -d)
cargo build --quiet --release --bins
SYNTH_FLAGS=()
if [ "${ENDPOINTS:-}" = refusing ]; then SYNTH_FLAGS=(--refusing-endpoints); fi
target/release/synth-cluster "${SYNTH_FLAGS[@]}" "$N" "$WORK/manifests"
target/release/echo-server fresh=19999 2>/dev/null &
ECHO=$!
RUST_LOG=info,source=debug,haproxy::state_dir=debug target/release/portcullis run --manifests "$WORK/manifests" --state-dir "$WORK/state" \
  --bind-address 127.0.0.1 --http-port 18080 --https-port 18443 --admin-bind 127.0.0.1:18254 \
  2>"$WORK/log" >"$WORK/haproxy-stdout" &
PORTCULLIS=$!
trap 'kill -TERM $PORTCULLIS $ECHO 2>/dev/null; wait $PORTCULLIS 2>/dev/null; rm -rf "$WORK"' EXIT
start=$(date +%s.%N)
until curl -fs http://127.0.0.1:18254/readyz >/dev/null; do sleep 0.02; done
echo "start-up to ready: $(echo "$(date +%s.%N) - $start" | bc) s"

# Polls HOST until the "fresh" echo backend answers, then prints the time since $edited.
# A poll routed before the change may go to a synthetic server that never answers: it
# gives up after 0.2 s, so the figure is the change's, not that server's timeout.
report_when_fresh() {
  until curl -fs -m 0.2 -H "Host: $1" http://127.0.0.1:18080/ 2>/dev/null | grep -q '"server":"fresh"'; do sleep 0.02; done
  echo "manifest edit to traffic on $2: $(echo "$(date +%s.%N) - $edited" | bc) s"
}

# One edit, in place: svc-3's EndpointSlice now holds a single endpoint, 127.0.0.1:19999.
HOST=svc-3.ns-3.example.test
python3 - "$WORK/manifests/services-0000.yaml" <<'PY'
import sys
path = sys.argv[1]
docs = open(path).read().split("\n---\n")
slice_doc = ("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: svc-3-abc\n"
             "  namespace: ns-3\n  labels: {kubernetes.io/service-name: svc-3}\naddressType: IPv4\n"
             "ports:\n- {name: http, port: 19999}\nendpoints:\n- addresses: [127.0.0.1]\n")
docs = [slice_doc if ("kind: EndpointSlice" in d and "name: svc-3-abc" in d) else d for d in docs]
open(path + ".tmp", "w").write("\n---\n".join(docs))
PY
# The clock starts at the rename that publishes the edit, not before the edit is prepared.
edited=$(date +%s.%N); echo "edit at $(date -u +%T.%N)"
mv "$WORK/manifests/services-0000.yaml.tmp" "$WORK/manifests/services-0000.yaml"
report_when_fresh "$HOST" "the new endpoint"

# An Ingress in ns-3 routing host $2 to service $3 (port "http"), named $1.
ingress_yaml() {
  printf 'apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: %s, namespace: ns-3}\nspec:\n  rules:\n  - host: %s\n    http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: %s, port: {name: http}}}}\n' "$1" "$2" "$3"
}

# Writes standard input to manifests/$1 in one rename, and starts the clock.
publish() {
  cat >"$WORK/manifests/.$1"
  edited=$(date +%s.%N)
  mv "$WORK/manifests/.$1" "$WORK/manifests/$1"
}

# A new route (a new host) to that existing backend: a map update, no reload.
# (`publish` reads a process substitution, not a pipe, so it sets $edited in this shell.)
publish route.yaml < <(ingress_yaml new-route new-route.example.test svc-3)
report_when_fresh new-route.example.test "a new route"

# A new Service: a new backend section, which needs a reload.
new_service_yaml() {
  cat <<'YAML'
apiVersion: v1
kind: Service
metadata: {name: brand-new, namespace: ns-3}
spec:
  ports:
  - {name: http, port: 80}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: brand-new-1
  namespace: ns-3
  labels: {kubernetes.io/service-name: brand-new}
addressType: IPv4
ports:
- {name: http, port: 19999}
endpoints:
- addresses: [127.0.0.1]
---
YAML
  ingress_yaml brand-new brand-new.example.test brand-new
}
publish new-service.yaml < <(new_service_yaml)
report_when_fresh brand-new.example.test "a new service (reload)"
curl -fs http://127.0.0.1:18254/metrics | grep -E "^portcullis_(reloads_total|updates_total|runtime_commands_total|reconcile_duration_seconds_(sum|count))"

shards=$(ls "$WORK/state/backends" | wc -l)
echo "shard files: $shards, $(( $(cat "$WORK"/state/backends/*.cfg | wc -c) / shards )) bytes each on average (one is rewritten)"
echo "controller peak RSS: $(grep VmHWM /proc/$PORTCULLIS/status | awk '{print $2, $3}')"
echo "controller RSS now: $(grep VmRSS /proc/$PORTCULLIS/status | awk '{print $2, $3}')"
grep -E "configuration checked|portcullis::|source::|Reloading|Loading success|New worker" "$WORK/log" | cut -c12-230
