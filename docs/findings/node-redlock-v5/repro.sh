#!/usr/bin/env bash
# Standalone reproduction of docs/findings/node-redlock-v5.md: five redis-servers on loopback,
# the pinned npm packages (package-lock.json) installed into a temp dir, then repro.js.
#   bash repro.sh        redlock 5.0.0-beta.2 (the bug: exits 1 when reproduced)
#   bash repro.sh v4     redlock 4.2.0, the control (exits 0)
#   bash repro.sh v5-own-value   v5 whose acquire script accepts its own value (PR #369's F2)
set -euo pipefail

which=${1:-v5}
case "$which" in v4|v5|v5-own-value) ;; *) echo "usage: bash repro.sh [v5|v4|v5-own-value]" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
command -v redis-server >/dev/null || { echo "repro.sh: redis-server is not on PATH" >&2; exit 2; }
command -v node >/dev/null && command -v npm >/dev/null || { echo "repro.sh: node and npm are needed" >&2; exit 2; }

tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() {
  node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

ports=()
for i in 1 2 3 4 5; do
  port=$(free_port)
  mkdir -p "$tmp/n$i"
  (cd "$tmp/n$i" && exec redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize no --enable-debug-command local --loglevel warning >"$tmp/n$i/log" 2>&1) &
  pids+=($!)
  ports+=("$port")
done
for port in "${ports[@]}"; do
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
  redis-cli -p "$port" ping >/dev/null
done

cp "$here/package.json" "$here/package-lock.json" "$here/repro.js" "$tmp/"
(cd "$tmp" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)

echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "versions: redis-server $(redis-server --version | sed -E 's/.* v=([^ ]+).*/\1/'), node $(node --version), npm $(npm --version); from package-lock.json: redlock 5.0.0-beta.2, redlock4 = redlock 4.2.0, ioredis 5.11.1"
echo "masters: n1..n5 = 127.0.0.1:${ports[*]}"
cd "$tmp"
set +e
node repro.js "$which" "${ports[@]}"
status=$?
set -e
exit $status
