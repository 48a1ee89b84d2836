"""lockpick adapter for portalocker's RedisLock (`portalocker.RedisLock`, the `redis` extra), used
as its Redis guide shows for a real server: `RedisLock(channel, redis_kwargs={'host': ..., 'port':
...})`, `acquire(timeout=...)`, `release()`. A new `RedisLock` for every acquisition, as every
example of the guide makes one for its use (`with portalocker.RedisLock(...)`); its holder id is
drawn once per instance. With `redis_kwargs` the lock builds its own command connection (the
library's DEFAULT_REDIS_KWARGS: health_check_interval=10, decode_responses) at acquire and closes
it at release. The library's own retry pacing is used (check_interval 0.25 s jittered, probes
waiting unavailable_timeout 1 s for answers), not `retry_delay_ms`. One node: the guide asks for
a single standalone Redis.

The lock is a pub/sub subscription, not a key: a holder stays subscribed to the channel on a
connection of its own that never reconnects, a reader thread answering other contenders' pings.
There is no lease (the guide: "There is no lease to refresh"), so `lease_ms` is null and there is
no renew; `ttl_ms` is not used. What ends a hold besides release is that connection going away:
a contender whose probe gets fewer answers than PUBSUB NUMSUB counts kills (CLIENT KILL) each
holder connection that did not answer within unavailable_timeout (1 s), alive or not.

What the library tells its user of a loss (the guide's "Losing a lock"): `on_lost` fires on the
reader thread when it sees its connection fail while held; told to lockpick as a `lost` event
(protocol 2). `release()` never raises for a loss, but `lost` stays true after it and
`ensure_held()` then raises `LockLostError` (the `with` block's exit does the same): that release
is `fail not-owner`. `interrupt_on_lost=False`, the default of portalocker 5.0 that the guide asks
users to choose early: 4.x's default interrupts the main thread with KeyboardInterrupt, which here
is the protocol loop and would end the adapter.

No fencing token by default. `[client] init = { fencing = true }` picks the guide's opt-in
`fencing=True`: every exclusive grant INCRs `<channel>-fence`, and `fence_token` is the token."""
import logging
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from lockpick_protocol import event, fail, host_port, ok, serve  # noqa: E402

import portalocker  # noqa: E402

# The library logs its probes' reaping ("Killing unavailable redis client") and losses as
# warnings; with a timestamp they line up with the run's history in clients/p<N>.stderr.
logging.basicConfig(
    stream=sys.stderr,
    level=logging.WARNING,
    format="%(asctime)s.%(msecs)03d %(name)s %(levelname)s %(message)s",
    datefmt="%H:%M:%S",
)


def start(init):
    host, port = host_port(init["nodes"][0])
    # A boolean: lockpick and the helper refuse anything else (lockpick-adapter.json).
    fencing = init["extra"].get("fencing", False)
    channel = "lockpick:lock:" + init["lock"]
    timeout = init["acquire_timeout_ms"] / 1000
    # The RedisLock of the acquisition held; None once released.
    held = {"lock": None}

    def on_lost(lock):
        # On the library's reader thread: one line out, no more.
        event("lost", token=lock.fence_token,
              reason=f"on_lost: holder {lock.holder_id} lost channel {lock.channel}")

    def acquire(_request):
        lock = portalocker.RedisLock(
            channel,
            redis_kwargs={"host": host, "port": port},
            on_lost=on_lost,
            interrupt_on_lost=False,
            fencing=fencing,
        )
        try:
            lock.acquire(timeout=timeout)
        except portalocker.AlreadyLocked:  # the timeout ran out (the lock released itself)
            return fail("timeout-waiting")
        held["lock"] = lock
        # fence_token is None without fencing; no lease: the hold is the subscription.
        return ok(token=lock.fence_token)

    def release(_request):
        lock, held["lock"] = held["lock"], None
        if lock is None:
            return fail("not-owner")
        lock.release()
        try:
            lock.ensure_held()
        except portalocker.LockLostError as e:  # revoked while held, seen by the reader thread
            # LockException's args are (code, message).
            return fail(f"not-owner: LockLostError: {e.args[-1] if e.args else e}")
        return ok()

    return {
        "adapter": "python-portalocker-redis-fenced" if fencing else "python-portalocker-redis",
        "library": "portalocker",
        "ops": {"acquire": acquire, "release": release},
        "events": ["lost"],
    }


serve(start)
