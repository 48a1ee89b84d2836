"""Toy lock with a two-round-trip release: GET, compare with our value, then DEL. If the lock
expires between the GET and the DEL and another client takes it, the DEL deletes *their* lock,
and a third client can take it while they still hold it: two holders."""
from toylock import fail, ok, run


def build(toy):
    def acquire(request):
        return toy.acquire_with(toy.set_nx, request["holder"])

    def release(_request):
        # The bug: the check and the delete are two commands, not one script.
        if toy.redis.get(toy.key) == toy.value.encode():
            toy.redis.delete(toy.key)
            return ok()
        return fail("not-owner")

    return {"acquire": acquire, "release": release}


run("toy-get-then-del", build)
