"""lockpick adapter for pottery's Redlock, used as its README shows:
`Redlock(key=..., masters={Redis(...) per node}, auto_release_time=ttl)`, `acquire(blocking=True,
timeout=...)`, `release()`, `extend()` as renew (at most `num_extensions`, 3 by default). No
fencing token (the lock has none). The library's own retry pause (0-200 ms) is used, not
`retry_delay_ms`: pottery does not take one."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from lockpick_protocol import fail, host_port, ok, serve  # noqa: E402

import redis  # noqa: E402
from pottery import Redlock  # noqa: E402
from pottery.exceptions import (  # noqa: E402
    ExtendUnlockedLock,
    ReleaseUnlockedLock,
    TooManyExtensions,
)


def start(init):
    masters = set()
    for node in init["nodes"]:
        host, port = host_port(node)
        masters.add(redis.Redis(host=host, port=port))
    ttl_s = init["ttl_ms"] / 1000
    lock = Redlock(key="lockpick:lock:" + init["lock"], masters=masters, auto_release_time=ttl_s)
    # pottery's validity: auto_release_time - (1% of it + 2 ms) drift - time spent acquiring.
    drift_ms = init["ttl_ms"] * 0.01 + 2
    state = {"since": None}

    def lease_left():
        elapsed_ms = (time.monotonic() - state["since"]) * 1000
        return max(0, int(init["ttl_ms"] - drift_ms - elapsed_ms))

    def acquire(_request):
        # Counted from the first try: every key was set no earlier, so this never overstates it.
        started = time.monotonic()
        if lock.acquire(blocking=True, timeout=init["acquire_timeout_ms"] / 1000):
            state["since"] = started
            return ok(lease_ms=lease_left())
        return fail("timeout-waiting")

    def release(_request):
        try:
            lock.release()
            return ok()
        except ReleaseUnlockedLock:  # no majority of masters held our value any more
            return fail("not-owner")

    def renew(_request):
        started = time.monotonic()
        try:
            lock.extend()
        except ExtendUnlockedLock:
            return fail("lost")
        except TooManyExtensions as e:  # pottery refuses a 4th extension of one acquisition
            return fail(f"too-many-extensions: {e}")
        state["since"] = started
        return ok(lease_ms=lease_left())

    return {
        "adapter": "python-pottery-redlock",
        "library": "pottery",
        "ops": {"acquire": acquire, "release": release, "renew": renew},
    }


serve(start)
