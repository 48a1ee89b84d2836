"""lockpick adapter for python-redis-lock (`redis_lock.Lock`), used as its docs show:
`Lock(conn, name, expire=...)`, `acquire(blocking=True, timeout=...)`, `release()`, `extend()` as
renew; `[client] init = { auto_renewal = true }` picks `Lock(..., auto_renewal=True)`, the
library's renewal thread (extends every 2/3 of `expire`). A new `Lock` for every acquisition,
kept until its release, as every example of the library's usage docs makes one
(`lock = redis_lock.Lock(conn, name)` then `acquire()` ... `release()`, or `with
redis_lock.Lock(conn, name):`); its id (the key's value) is drawn once per `Lock`, so one `Lock`
reused would give every acquisition of the process the same id. The Redis client is made once
and shared. One node; no fencing token; no lease claimed (`lease_ms` null): the library does
not say how long a lock it got stays valid.

The library counts `expire` and `timeout` in whole seconds (`int(...)`) and refuses a timeout
above `expire` without auto renewal, so `ttl_ms` must be a whole number of seconds and, without
auto renewal, `acquire_timeout_ms` at most `ttl_ms`. A waiter sleeps in BLPOP on the lock's
signal list: a release wakes it at once, an expiry only when its BLPOP times out.

No events (protocol 1): the library tells its user nothing when its renewal fails. Its renewal
thread (`Lock._lock_renewer`, 4.0.x) calls `extend()`, and when the key is gone `extend()`
raises `NotAcquired` inside that thread: the thread dies, Python prints the traceback to
stderr, and the holder is never told (no callback, no flag; `lock.locked()` asks Redis whether
anyone holds the key, not whether this holder does). Only a later `release()` or `extend()`
raises."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from lockpick_protocol import fail, host_port, ok, serve  # noqa: E402

import redis  # noqa: E402
import redis_lock  # noqa: E402


def start(init):
    ttl_ms = init["ttl_ms"]
    timeout_ms = init["acquire_timeout_ms"]
    # A boolean: lockpick and the helper refuse anything else (lockpick-adapter.json).
    auto_renewal = init["extra"].get("auto_renewal", False)
    if ttl_ms % 1000 != 0 or ttl_ms < 1000:
        raise SystemExit(
            f"python-redis-lock adapter: lock.ttl_ms = {ttl_ms} is not allowed: the library's "
            "expire is whole seconds; use 1000, 2000, ..."
        )
    if timeout_ms % 1000 != 0 or timeout_ms < 1000:
        raise SystemExit(
            f"python-redis-lock adapter: lock.acquire_timeout_ms = {timeout_ms} is not allowed: "
            "the library's timeout is whole seconds; use 1000, 2000, ..."
        )
    if not auto_renewal and timeout_ms > ttl_ms:
        raise SystemExit(
            f"python-redis-lock adapter: lock.acquire_timeout_ms = {timeout_ms} is above "
            f"lock.ttl_ms = {ttl_ms}, which the library refuses (TimeoutTooLarge) without "
            "auto_renewal"
        )
    host, port = host_port(init["nodes"][0])
    client = redis.Redis(host=host, port=port)
    name = "lockpick:lock:" + init["lock"]
    # The Lock of the acquisition held (its renewal thread, if any, lives as long as it does);
    # None once released.
    held = {"lock": None}

    def acquire(_request):
        lock = redis_lock.Lock(client, name, expire=ttl_ms // 1000, auto_renewal=auto_renewal)
        if lock.acquire(blocking=True, timeout=timeout_ms // 1000):
            held["lock"] = lock
            # Lock.id is the value the lock's key holds, by which the server's record knows
            # this holder.
            return ok(owner=lock.id)
        return fail("timeout-waiting")

    def release(_request):
        lock, held["lock"] = held["lock"], None
        if lock is None:
            return fail("not-owner")
        try:
            lock.release()
            return ok()
        except redis_lock.NotAcquired:  # the key holds another id, or none
            return fail("not-owner")

    def renew(_request):
        lock = held["lock"]
        if lock is None:
            return fail("lost")
        try:
            lock.extend()
        except redis_lock.NotAcquired:
            return fail("lost")
        return ok()

    return {
        "adapter": "python-redis-lock-auto-renewal" if auto_renewal else "python-redis-lock",
        "library": "python-redis-lock",
        "ops": {"acquire": acquire, "release": release, "renew": renew},
    }


serve(start)
