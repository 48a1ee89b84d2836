#!/usr/bin/env bash
# Standalone reproduction of docs/findings/rust-redlock.md (redlock 2.0.0, usize validity wrap).
# Usage: bash repro.sh [both|release|debug]   (default: both)
#   release: the program built with `cargo build --release` (the bug: a wrapped validity, a grant)
#   debug:   the same program built without --release (the panic upstream #20 reports)
# Needs cargo/rustc, redis-server and redis-cli on PATH. Builds into ./target (git-ignored).
# Exit 1 when a run reproduced the bug, 0 when none did, 2 on a setup error.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=${1:-both}
case "$mode" in both | release | debug) ;; *)
  echo "usage: bash repro.sh [both|release|debug]" >&2
  exit 2
  ;;
esac

tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

# A port on 127.0.0.1 that nothing listens on, below Linux's ephemeral range (32768-60999) so
# that no client socket holds it.
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 12000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return
    fi
  done
}

# Waits until redis-server (pid $1) answers PING on port $2; fails if it exits first.
await_redis() {
  for _ in $(seq 300); do
    [[ $(redis-cli -p "$2" ping 2>/dev/null) == PONG ]] && return 0
    kill -0 "$1" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

echo "date: $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
echo "redis-server: $(redis-server --version)"
echo "rustc: $(rustc --version)"
echo "crates (Cargo.lock): $(awk '/^name = "(redlock|redis)"$/ {n = $3; getline; printf "%s %s  ", n, $3}' "$here/Cargo.lock" | tr -d '"')"

builds=()
[[ $mode == release || $mode == both ]] && builds+=(release)
[[ $mode == debug || $mode == both ]] && builds+=(debug)
for b in "${builds[@]}"; do
  flag=()
  [[ $b == release ]] && flag=(--release)
  echo "building ($b): cargo build --locked ${flag[*]}"
  cargo build --quiet --locked "${flag[@]}" --manifest-path "$here/Cargo.toml"
done

ports=()
for i in 1 2 3; do
  mkdir "$tmp/m$i"
  for try in 1 2 3 4 5; do # another port if this one was taken meanwhile
    port=$(free_port)
    (cd "$tmp/m$i" && exec redis-server --port "$port" --bind 127.0.0.1 --save '' \
      --appendonly no --daemonize no --enable-debug-command local --logfile "$tmp/m$i/log") &
    pids+=($!)
    await_redis "$!" "$port" && break
    if [[ $try == 5 ]]; then
      echo "redis-server did not start; its log:" >&2
      cat "$tmp/m$i/log" >&2 || true
      exit 2
    fi
  done
  ports+=("$port")
done
echo "masters: redis-server on 127.0.0.1 ports ${ports[*]} (no persistence, DEBUG enabled)"

status=0
for b in "${builds[@]}"; do
  for port in "${ports[@]}"; do redis-cli -p "$port" flushall >/dev/null; done
  echo
  echo "=== $b build: target/$b/redlock-wrap-repro ${ports[*]}"
  set +e
  RUST_BACKTRACE=0 "$here/target/$b/redlock-wrap-repro" "${ports[@]}" 2>&1
  rc=$?
  set -e
  echo "(exit $rc)"
  case $rc in
    0) ;;
    1) status=1 ;;
    *) exit 2 ;;
  esac
done
echo "run took ${SECONDS} s"
exit "$status"
