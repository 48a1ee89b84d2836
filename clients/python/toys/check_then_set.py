"""Toy lock whose acquire checks and sets in two commands: GET, and if the key is empty, a plain
SET (no NX). Two clients that both read "empty" both set it, and both think they hold it."""
from toylock import CAD, fail, ok, run


def build(toy):
    def try_once(holder):
        # The bug: another client can SET between this GET and our SET.
        if toy.redis.get(toy.key) is not None:
            return False
        toy.redis.set(toy.key, holder, px=toy.ttl_ms)
        return True

    def acquire(request):
        return toy.acquire_with(try_once, request["holder"])

    def release(_request):
        if toy.redis.eval(CAD, 1, toy.key, toy.value) == 1:
            return ok()
        return fail("not-owner")

    return {"acquire": acquire, "release": release}


run("toy-check-then-set", build)
