#!/usr/bin/env bash
# Standalone reproduction of docs/findings/python-redis-lock.md (python-redis-lock 4.0.1: the
# auto_renewal thread dies at the first exception of extend() and nobody is told).
# Usage: bash repro.sh [outage|client-kill]   (default: outage)
#   outage:      redis-server killed just before a renewal and restarted (AOF) once the renewal
#                thread has died: the bug
#   client-kill: the control: one CLIENT KILL before a renewal, which redis-py's retries absorb
# Needs python3 (3.10 or later, with venv and pip), redis-server and redis-cli on PATH; installs
# requirements.txt (hashed) into a venv in a temp dir. Exit 1 when the bug shows, 0 when not.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=${1:-outage}
case "$mode" in outage | client-kill) ;; *)
  echo "usage: bash repro.sh [outage|client-kill]" >&2
  exit 2
  ;;
esac

tmp=$(mktemp -d)
pids=()
cleanup() {
  # The server this script started, and the one the program restarted (it rewrote the pidfile).
  if [[ -s $tmp/redis/redis.pid ]]; then pids+=("$(cat "$tmp/redis/redis.pid")"); fi
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
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
echo "python3: $(python3 --version)"

python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes \
  --only-binary :all: -r "$here/requirements.txt"
echo "installed: $("$tmp/venv/bin/pip" freeze --disable-pip-version-check | tr '\n' ' ')"

mkdir "$tmp/redis"
for try in 1 2 3 4 5; do # another port if this one was taken meanwhile
  port=$(free_port)
  # AOF with appendfsync always: a restart keeps the lock key, so its later expiry comes from the
  # missing renewal alone.
  cat >"$tmp/redis/redis.conf" <<CONF
port $port
bind 127.0.0.1
dir $tmp/redis
save ""
appendonly yes
appendfsync always
daemonize no
pidfile $tmp/redis/redis.pid
logfile $tmp/redis/redis.log
CONF
  redis-server "$tmp/redis/redis.conf" &
  pids+=($!)
  disown "$!" # the program kills it with SIGKILL: no "Killed" job notice from bash
  await_redis "${pids[-1]}" "$port" && break
  if [[ $try == 5 ]]; then
    echo "redis-server did not start; its log:" >&2
    cat "$tmp/redis/redis.log" >&2 || true
    exit 2
  fi
done
echo "redis-server on 127.0.0.1:$port (appendonly yes, appendfsync always)"
echo

set +e
"$tmp/venv/bin/python" -u "$here/repro.py" --conf "$tmp/redis/redis.conf" --port "$port" "$mode" 2>&1
rc=$?
set -e
echo "(exit $rc; run took ${SECONDS} s)"
exit "$rc"
