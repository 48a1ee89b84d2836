"""lockpick adapter for redis-py's Lock (the `redis` package), used as its docs show:
`r.lock(name, timeout=..., sleep=..., blocking_timeout=...)`, `acquire()`, `release()`,
`extend(..., replace_ttl=True)` (renew; redis-py has no automatic extension). One node; no
fencing token (the lock has none)."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from lockpick_protocol import fail, host_port, ok, serve  # noqa: E402

import redis  # noqa: E402
from redis.exceptions import LockError, LockNotOwnedError  # noqa: E402


def start(init):
    host, port = host_port(init["nodes"][0])
    client = redis.Redis(host=host, port=port)
    ttl_s = init["ttl_ms"] / 1000
    low, high = init["retry_delay_ms"]
    lock = client.lock(
        "lockpick:lock:" + init["lock"],
        timeout=ttl_s,
        sleep=(low + high) / 2000,
        blocking_timeout=init["acquire_timeout_ms"] / 1000,
    )
    state = {"since": None}

    def lease_left():
        return max(0, int(init["ttl_ms"] - (time.monotonic() - state["since"]) * 1000))

    def acquire(_request):
        # Counted from the first try: the key was set no earlier, so this never overstates it.
        started = time.monotonic()
        if lock.acquire():
            state["since"] = started
            return ok(lease_ms=lease_left())
        return fail("timeout-waiting")

    def release(_request):
        try:
            lock.release()
            return ok()
        except LockNotOwnedError:
            return fail("not-owner")
        except LockError as e:  # "Cannot release an unlocked lock": it was never ours here
            return fail(f"not-owner: {e}")

    def renew(_request):
        started = time.monotonic()
        try:
            lock.extend(ttl_s, replace_ttl=True)
        except (LockNotOwnedError, LockError):
            return fail("lost")
        state["since"] = started
        return ok(lease_ms=lease_left())

    return {
        "adapter": "python-redis-py-lock",
        "library": "redis",
        "ops": {"acquire": acquire, "release": release, "renew": renew},
    }


serve(start)
