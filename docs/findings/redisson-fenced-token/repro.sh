#!/usr/bin/env bash
# Standalone reproduction of docs/findings/redisson-fenced-token.md (no lockpick needed).
#
#   bash repro.sh [none|aof-always]     (default none: the redis-server has no persistence)
#
# aof-always is the control: the same run with appendonly yes + appendfsync always, so the
# token counter survives the restart.
#
# Needs java (17+, it runs FencedToken.java as a single source file), mvn, and redis-server /
# redis-cli on PATH. Starts one redis-server on a free loopback port in a temp dir, copies the
# pinned dependencies (pom.xml) into that temp dir, runs the program (which calls this script
# back to kill -9 and restart the server), and on any exit kills every server it started and
# removes the temp dir.
# Exit status: the program's (1 = BUG REPRODUCED, 0 = not reproduced), 2 = usage or setup error.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

start_redis() { # name port: a redis-server, its pid in $REPRO_TMP/name.pid, data in $REPRO_TMP
    local name=$1 port=$2 persist
    if [ "$REPRO_PERSISTENCE" = aof-always ]; then
        persist=(--save '' --appendonly yes --appendfsync always --appendfilename "$name.aof"
                 --appenddirname "$name-aof")
    else
        persist=(--save '' --appendonly no)
    fi
    redis-server --port "$port" --bind 127.0.0.1 "${persist[@]}" \
        --dir "$REPRO_TMP" --daemonize yes --pidfile "$REPRO_TMP/$name.pid" \
        --logfile "$REPRO_TMP/$name.log"
    for _ in $(seq 400); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    echo "redis-server $name on port $port did not answer within 20 s; its log:" >&2
    tail -5 "$REPRO_TMP/$name.log" >&2 || true
    return 2
}

# Called by the program: kill -9 a server and start it again with the same settings.
if [ "${1:-}" = "--restart-redis" ]; then
    name=$2 port=$3
    pid="$(cat "$REPRO_TMP/$name.pid")"
    kill -9 "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.01; done
    start_redis "$name" "$port"
    echo "(repro.sh: $name killed (pid $pid) and restarted (pid $(cat "$REPRO_TMP/$name.pid")), persistence: $REPRO_PERSISTENCE)"
    exit 0
fi

REPRO_PERSISTENCE="${1:-none}"
case "$REPRO_PERSISTENCE" in
    none|aof-always) ;;
    *) echo "usage: bash repro.sh [none|aof-always]" >&2; exit 2 ;;
esac
export REPRO_PERSISTENCE

REPRO_TMP="$(mktemp -d)"
export REPRO_TMP
export REPRO_SH="$here/repro.sh"
cleanup() {
    for f in "$REPRO_TMP"/*.pid; do
        [ -e "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null || true
    done
    rm -rf "$REPRO_TMP"
}
trap cleanup EXIT

free_port() { # below Linux's ephemeral range (32768-60999), so no client socket holds it
    local p
    while :; do
        p=$((20000 + RANDOM % 12000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
    done
}

echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "persistence: $REPRO_PERSISTENCE"
echo "java: $(java -version 2>&1 | head -1)"
echo "redis-server: $(redis-server --version)"
echo "mvn: $(mvn -B -v 2>/dev/null | head -1 | sed 's/\x1b\[[0-9;]*m//g')"

# The pinned dependencies, into the temp dir (offline from ~/.m2 when they are there).
mvn_args=(-B -q -Dstyle.color=never -f "$here/pom.xml" -Drepro.lib="$REPRO_TMP/lib"
          dependency:copy-dependencies)
mvn -o "${mvn_args[@]}" >/dev/null 2>&1 || mvn "${mvn_args[@]}"
echo "classpath: $(cd "$REPRO_TMP/lib" && ls | tr '\n' ' ')"

for try in 1 2 3; do # a port taken between the check and the bind: another one
    port="$(free_port)"
    start_redis n1 "$port" && break
    [ "$try" = 3 ] && exit 2
done

set +e
java -cp "$REPRO_TMP/lib/*" "$here/FencedToken.java" "$port"
rc=$?
set -e
exit "$rc"
