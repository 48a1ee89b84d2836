"""lockpick adapter for pottery's Redlock, used as its README shows:
`Redlock(key=..., masters={Redis(...) per node}, auto_release_time=ttl)`, `acquire(blocking=True,
timeout=...)`, `release()`, `extend()` as renew (at most `num_extensions`, 3 by default). A new
`Redlock` for every acquisition, kept until its release: pottery's README calls that the safest
use ("instantiate a new Redlock object every time you need to protect your resource"); the Redis
clients, one per master, are made once and shared, as the README's are. No
fencing token (the lock has none). No lease is reported: `acquire()` and `extend()` answer a
bool, and `locked()`, the validity pottery computes, is a second round to every master, which
would stand between the grant and the user's work. Asked before answering, it waited on a cut
master until the heal (4.5 s) after a grant made before the cut, so lockpick recorded the grant
and the write that follows it 4.5 s late, past the key's expiry, and a rival's grant made a
double holder that a user of `acquire()` alone would not have (seed 3 of the pottery 0.43
catalogue entry, 2026-11-30). The library's own retry pause (0-200 ms) is used, not
`retry_delay_ms`: pottery does not take one.

The same source runs pottery 0.42 and 0.43 for the known-bug catalogue (bin/pottery@<release>):
pottery_api.py, beside this file, holds what their API does differently (milliseconds, and an
`extend()` that returns False)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from lockpick_protocol import fail, host_port, ok, serve  # noqa: E402

import redis  # noqa: E402
from pottery import Redlock  # noqa: E402
from pottery.exceptions import ReleaseUnlockedLock, TooManyExtensions  # noqa: E402

import pottery_api  # noqa: E402


def start(init):
    masters = set()
    for node in init["nodes"]:
        host, port = host_port(node)
        masters.add(redis.Redis(host=host, port=port))
    auto_release_time = pottery_api.auto_release_time(init["ttl_ms"])
    key = "lockpick:lock:" + init["lock"]
    # The Redlock of the acquisition in progress or held; None once released.
    held = {"lock": None}

    def acquire(_request):
        lock = Redlock(key=key, masters=masters, auto_release_time=auto_release_time)
        if lock.acquire(blocking=True, timeout=init["acquire_timeout_ms"] / 1000):
            held["lock"] = lock
            return ok()
        return fail("timeout-waiting")

    def release(_request):
        lock, held["lock"] = held["lock"], None
        if lock is None:
            return fail("not-owner")
        try:
            lock.release()
            return ok()
        except ReleaseUnlockedLock:  # no majority of masters held our value any more
            return fail("not-owner")

    def renew(_request):
        lock = held["lock"]
        if lock is None:
            return fail("lost")
        try:
            if not pottery_api.extend(lock):
                return fail("lost")
        except TooManyExtensions as e:  # pottery refuses a 4th extension of one acquisition
            return fail(f"too-many-extensions: {e}")
        return ok()

    return {
        "adapter": "python-pottery-redlock",
        "library": "pottery",
        "ops": {"acquire": acquire, "release": release, "renew": renew},
    }


serve(start)
