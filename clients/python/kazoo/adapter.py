"""lockpick adapter for kazoo's Lock recipe (ZooKeeper), used as its docs show:
`zk = KazooClient(hosts=..., timeout=...)`, `zk.start()`, `lock = zk.Lock(path, identifier)`,
`lock.acquire(timeout=...)`, `lock.release()`. The session timeout is the scenario's TTL;
kazoo keeps the session alive itself (its own ping thread, stopped with the process during a
client pause). The fencing token is the lock node's sequence number. No renew: kazoo has no
lease to extend.

kazoo's docs tell a lock's user to watch the connection with `zk.add_listener`: SUSPENDED
means the lock may be gone, LOST that it is (the session expired). Each is told to lockpick
as it is reported (protocol 2 events `suspended`, `lost`), and CONNECTED after one of them
as `reconnected`."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from lockpick_protocol import event, fail, info, ok, serve  # noqa: E402

from kazoo.client import KazooClient, KazooState  # noqa: E402
from kazoo.exceptions import LockTimeout, NoNodeError, SessionExpiredError  # noqa: E402


def start(init):
    zk = KazooClient(
        hosts=",".join(init["nodes"]),
        timeout=init["ttl_ms"] / 1000,
    )
    zk.start(timeout=15)
    identifier = "lockpick-%d" % init["process"]
    lock = zk.Lock("/locks/" + init["lock"], identifier)
    last = [KazooState.CONNECTED]

    def listener(state):
        # Called on kazoo's connection thread, which must not block: one line out, no more.
        told = {KazooState.SUSPENDED: "suspended", KazooState.LOST: "lost"}.get(state)
        if state == KazooState.CONNECTED and last[0] != KazooState.CONNECTED:
            told = "reconnected"
        last[0] = state
        if told is not None:
            print(f"kazoo: connection state {state}", file=sys.stderr, flush=True)
            event(told, reason=f"connection state {state}")

    # Added once connected: the first CONNECTED is not news.
    zk.add_listener(listener)

    def token():
        # The node is "<uuid>__lock__<sequence>": the sequence number is ZooKeeper's.
        sequence = re.search(r"(\d+)$", lock.node or "")
        return int(sequence.group(1)) if sequence else None

    def acquire(_request):
        try:
            got = lock.acquire(timeout=init["acquire_timeout_ms"] / 1000)
        except LockTimeout:
            return fail("timeout")
        if not got:
            return fail("timeout")
        # kazoo does not claim a lease: the session timeout is the server's, not a validity
        # the lock promises its holder. The lock's znode holds the identifier given to Lock,
        # by which the server's record knows this holder.
        return ok(token=token(), owner=identifier)

    def release(_request):
        if not lock.is_acquired:
            return fail("not-owner")
        try:
            # kazoo's release returns True once it deleted the node (or found it gone).
            if lock.release():
                return ok()
            return info("release returned false")
        except SessionExpiredError:
            return fail("session-expired")
        except NoNodeError:
            return fail("not-owner")

    return {
        "adapter": "python-kazoo-lock",
        "library": "kazoo",
        "ops": {"acquire": acquire, "release": release},
        "events": ["lost", "suspended", "reconnected"],
    }


serve(start)
