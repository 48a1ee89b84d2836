"""Small Redis locks of lockpick's own, each with one known bug (or none), for testing that
lockpick finds a bug a user did not know where to look for. They are not libraries to use:
`compare_and_delete.py` is the correct one; the others each break it in one place.

All of them take the lock with `SET key holder NX PX ttl` (except check_then_set.py), retry
every `retry_delay_ms` until `acquire_timeout_ms`, report no fencing token, and claim a lease
of `ttl_ms` counted from when the winning SET was sent (their own claim, as a library's)."""
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from lockpick_protocol import fail, host_port, ok, serve  # noqa: E402

import redis  # noqa: E402

# Compare-and-delete in one round trip: the release every Redis lock guide recommends.
CAD = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('del', KEYS[1])
end
return 0
"""


class Toy:
    """The state one adapter process keeps: the connection, the key, the value it last set."""

    def __init__(self, init):
        host, port = host_port(init["nodes"][0])
        # No client-side timeouts beyond lockpick's: a request that hangs is lockpick's `info`.
        self.redis = redis.Redis(host=host, port=port)
        self.key = "lockpick:lock:" + init["lock"]
        self.ttl_ms = init["ttl_ms"]
        self.timeout_s = init["acquire_timeout_ms"] / 1000
        self.delay_ms = init["retry_delay_ms"]
        self.rng = random.Random(init["seed"])
        self.value = None
        self.since = None

    def lease_left(self):
        return max(0, int(self.ttl_ms - (time.monotonic() - self.since) * 1000))

    def acquire_with(self, try_once, holder):
        """Retries `try_once(value) -> bool` until it wins or the acquire timeout passes."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            sent = time.monotonic()
            if try_once(holder):
                self.value, self.since = holder, sent
                return ok(lease_ms=self.lease_left())
            if time.monotonic() >= deadline:
                return fail("timeout-waiting")
            time.sleep(self.rng.uniform(*self.delay_ms) / 1000)

    def set_nx(self, holder):
        return bool(self.redis.set(self.key, holder, nx=True, px=self.ttl_ms))


def run(adapter, build):
    """Serves the protocol with the ops `build(toy)` returns."""

    def start(init):
        return {"adapter": adapter, "library": "redis", "ops": build(Toy(init))}

    serve(start)
