"""Toy lock whose renewal extends the key without checking it is still ours (a bare PEXPIRE).
After its lease ran out and another client took the lock, a renewal still answers "renewed"
(and extends the other holder's lock), so the old holder goes on as if it held it."""
import time

from toylock import CAD, fail, ok, run


def build(toy):
    def acquire(request):
        return toy.acquire_with(toy.set_nx, request["holder"])

    def release(_request):
        if toy.redis.eval(CAD, 1, toy.key, toy.value) == 1:
            return ok()
        return fail("not-owner")

    def renew(_request):
        sent = time.monotonic()
        # The bug: PEXPIRE whatever is at the key; only a missing key counts as lost.
        if toy.redis.pexpire(toy.key, toy.ttl_ms):
            toy.since = sent
            return ok(lease_ms=toy.lease_left())
        return fail("lost")

    return {"acquire": acquire, "release": release, "renew": renew}


run("toy-unchecked-renew", build)
