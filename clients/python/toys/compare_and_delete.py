"""The correct toy lock: SET NX PX to acquire, a Lua compare-and-delete to release, a Lua
compare-and-PEXPIRE to renew. With no fencing token, a holder that stops past its lease can
still write after another took the lock (Kleppmann's case); nothing else should break it."""
import time

from toylock import CAD, fail, ok, run

RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""


def build(toy):
    def acquire(request):
        return toy.acquire_with(toy.set_nx, request["holder"])

    def release(_request):
        if toy.redis.eval(CAD, 1, toy.key, toy.value) == 1:
            return ok()
        return fail("not-owner")

    def renew(_request):
        sent = time.monotonic()
        if toy.redis.eval(RENEW, 1, toy.key, toy.value, toy.ttl_ms) == 1:
            toy.since = sent
            return ok(lease_ms=toy.lease_left())
        return fail("lost")

    return {"acquire": acquire, "release": release, "renew": renew}


run("toy-compare-and-delete", build)
