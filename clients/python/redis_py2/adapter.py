"""lockpick adapter for redis-py 2.x's Lock (the `redis` package before 3.0), for the known-bug
catalogue's redis-py #415 pair: 2.9.1 and 2.10.0, each in a venv of its own
(clients/python/pinned/redis-<release>/, run by bin/redis-py2@<release>). Today's redis-py is
../redis_py's. Used as those releases' docs show: `StrictRedis(host, port).lock(name,
timeout=seconds, sleep=seconds)`, `acquire()`, `release()`, and 2.10.0's `extend(seconds)` as
renew (2.9.1 has none). One Lock object, made once and reused for every acquisition, as
../redis_py's (each acquire writes a new value: 2.9.1 its expiry time, 2.10.0 a new token).

The two releases' locks are not the same code:
- 2.9.1 has one `Lock`: SETNX of its expiry time by the client's clock (no Redis TTL), a
  takeover by GETSET once that time has passed, and a release that GETs the value, compares it
  with its own expiry time (delete if the stored one is not earlier) and DELs: two round trips,
  and a later holder's value always passes the compare (redis-py #415). `release()` says
  nothing either way (it raises only for a Lock that never acquired). Its `acquire(blocking=
  True)` retries every `sleep` for ever: it takes no timeout, so an acquire with lockpick's
  deadline is `acquire(blocking=False)` tried again every `sleep` until `acquire_timeout_ms`,
  the loop the library's own blocking acquire runs, with a deadline added.
- 2.10.0's `lock()` returns a `LuaLock` when the server runs scripts (any Redis from 2.6): one
  script SETNX + PEXPIRE with a random token, one script that deletes only its own token, and
  `LockError("Cannot release a lock that's no longer owned")` otherwise. It takes
  `blocking_timeout`.

`sleep` is the middle of `retry_delay_ms`, as ../redis_py's. No fencing token (the lock has
none) and no lease claimed (`lease_ms` null), as ../redis_py: the library does not say how
long the lock it got is valid."""
import inspect
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from lockpick_protocol import fail, host_port, ok, serve  # noqa: E402

import redis  # noqa: E402

try:
    from redis.exceptions import LockError  # 2.10.0
except ImportError:  # 2.9.1 defines it in redis.client, raised only by Lock() for sleep > timeout
    from redis.client import LockError


def start(init):
    host, port = host_port(init["nodes"][0])
    client = redis.StrictRedis(host=host, port=port)
    ttl_s = init["ttl_ms"] / 1000
    low, high = init["retry_delay_ms"]
    sleep_s = (low + high) / 2000
    timeout_s = init["acquire_timeout_ms"] / 1000
    name = "lockpick:lock:" + init["lock"]
    # 2.10.0 on: the library's own deadline; 2.9.1: none (below).
    has_deadline = "blocking_timeout" in inspect.signature(client.lock).parameters
    if has_deadline:
        lock = client.lock(name, timeout=ttl_s, sleep=sleep_s, blocking_timeout=timeout_s)
    else:
        lock = client.lock(name, timeout=ttl_s, sleep=sleep_s)

    def acquire(_request):
        if has_deadline:
            return ok() if lock.acquire() else fail("timeout-waiting")
        deadline = time.monotonic() + timeout_s
        while True:
            if lock.acquire(blocking=False):
                return ok()
            if time.monotonic() > deadline:
                return fail("timeout-waiting")
            time.sleep(sleep_s)

    def release(_request):
        try:
            lock.release()  # 2.9.1: silent whether or not it deleted anything
            return ok()
        except LockError as e:  # 2.10.0: "... no longer owned", or never acquired here
            return fail(f"not-owner: {e}")
        except ValueError as e:  # 2.9.1: "Cannot release an unlocked lock": never acquired here
            return fail(f"not-owner: {e}")

    def renew(_request):
        try:
            lock.extend(ttl_s)  # 2.10.0 adds this to the time left (its only form)
        except LockError:
            return fail("lost")
        return ok()

    ops = {"acquire": acquire, "release": release}
    if hasattr(lock, "extend"):
        ops["renew"] = renew
    return {"adapter": "python-redis-py2-lock", "library": "redis", "ops": ops}


serve(start)
