"""lockpick adapter for pottery's Redlock, used as its README shows:
`Redlock(key=..., masters={Redis(...) per node}, auto_release_time=ttl)`, `acquire(blocking=True,
timeout=...)`, `release()`, `extend()` as renew (at most `num_extensions`, 3 by default). No
fencing token (the lock has none). The lease reported is pottery's own claim: `locked()`, the
validity it computes (the masters' shortest PTTL less its drift and the time it took), asked
right after the acquire or extension as its docs show. The library's own retry pause (0-200 ms) is used, not
`retry_delay_ms`: pottery does not take one."""
import os
import sys

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
    def lease_left():
        # Seconds of validity left on a quorum of masters, 0 if pottery sees none.
        return int(lock.locked() * 1000)

    def acquire(_request):
        if lock.acquire(blocking=True, timeout=init["acquire_timeout_ms"] / 1000):
            return ok(lease_ms=lease_left())
        return fail("timeout-waiting")

    def release(_request):
        try:
            lock.release()
            return ok()
        except ReleaseUnlockedLock:  # no majority of masters held our value any more
            return fail("not-owner")

    def renew(_request):
        try:
            lock.extend()
        except ExtendUnlockedLock:
            return fail("lost")
        except TooManyExtensions as e:  # pottery refuses a 4th extension of one acquisition
            return fail(f"too-many-extensions: {e}")
        return ok(lease_ms=lease_left())

    return {
        "adapter": "python-pottery-redlock",
        "library": "pottery",
        "ops": {"acquire": acquire, "release": release, "renew": renew},
    }


serve(start)
