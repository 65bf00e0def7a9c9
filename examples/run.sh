#!/usr/bin/env bash
# Runs portcullis on the bundled example manifests with a real HAProxy and two echo
# backends on 127.0.0.1, shows host, path and TLS routing with curl, then keeps serving
# until Ctrl-C. With --once it exits after the demonstration.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ]; then
  echo "installing haproxy..."
  SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy curl
fi
cargo build --quiet --bins

STATE=${PORTCULLIS_STATE_DIR:-/tmp/portcullis-example}
target/debug/echo-server web-1=9101 web-2=9102 api=9103 &
ECHO_PID=$!
target/debug/portcullis run --manifests examples/manifests --state-dir "$STATE" \
  --configmap demo/portcullis --bind-address 127.0.0.1 --http-port 8080 --https-port 8443 \
  --admin-bind 127.0.0.1:10254 &
PORTCULLIS_PID=$!
trap 'kill -TERM $PORTCULLIS_PID $ECHO_PID 2>/dev/null; wait $PORTCULLIS_PID 2>/dev/null' EXIT

for _ in $(seq 100); do
  curl -fs http://127.0.0.1:10254/readyz >/dev/null && break
  sleep 0.2
done
curl -fs http://127.0.0.1:10254/readyz >/dev/null || { echo "portcullis did not become ready" >&2; exit 1; }

show() { echo; echo "\$ $*"; "$@"; echo; }
R="--resolve www.example.test:8443:127.0.0.1"
show curl -s -o /dev/null -w '%{http_code} -> %{redirect_url}\n' -H 'Host: www.example.test' http://127.0.0.1:8080/
show curl -sk $R https://www.example.test:8443/
show curl -sk $R https://www.example.test:8443/api/users
show curl -sk $R -w '\nserver certificate: %{certs}\n' -o /dev/null https://www.example.test:8443/ --write-out '' -v 2>&1 | grep -m1 'subject:' || true
show curl -s -H 'Host: shop.apps.example.test' http://127.0.0.1:8080/static
show curl -s -H 'Host: unknown.example.test' http://127.0.0.1:8080/anything
show curl -s -H 'Host: store.gateway.example.test' -H 'x-canary: yes' http://127.0.0.1:8080/  # HTTPRoute: canary to api
show curl -s -o /dev/null -w '%{http_code} -> %{redirect_url}\n' -H 'Host: store.gateway.example.test' http://127.0.0.1:8080/old/page
show curl -s http://127.0.0.1:9000/raw  # TCPRoute: port 9000's bytes to api
echo "Gateway API status: curl -s http://127.0.0.1:10254/status"
echo "metrics: curl -s http://127.0.0.1:10254/metrics | grep ^portcullis_"
if [ "${1:-}" = "--once" ]; then exit 0; fi
echo "serving on 127.0.0.1:8080 (HTTP) and 127.0.0.1:8443 (HTTPS); edit examples/manifests to see changes applied; Ctrl-C stops."
wait $PORTCULLIS_PID
