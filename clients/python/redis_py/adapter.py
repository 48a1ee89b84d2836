"""lockpick adapter for redis-py's Lock (the `redis` package), used as its docs show:
`r.lock(name, timeout=..., sleep=..., blocking_timeout=...)`, `acquire()`, `release()`,
`extend(..., replace_ttl=True)` (renew; redis-py has no automatic extension). One node; no
fencing token (the lock has none), and no lease claimed (`lease_ms` null): redis-py's Lock does
not say how long the lock it got is still valid, and the adapter does not guess for it."""
import os
import sys

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
    def acquire(_request):
        if lock.acquire():
            return ok()
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
        try:
            lock.extend(ttl_s, replace_ttl=True)
        except (LockNotOwnedError, LockError):
            return fail("lost")
        return ok()

    return {
        "adapter": "python-redis-py-lock",
        "library": "redis",
        "ops": {"acquire": acquire, "release": release, "renew": renew},
    }


serve(start)
