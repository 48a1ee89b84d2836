"""lockpick adapter for kazoo's Lock recipe (ZooKeeper), used as its docs show:
`zk = KazooClient(hosts=..., timeout=...)`, `zk.start()`, `lock = zk.Lock(path, identifier)`,
`lock.acquire(timeout=...)`, `lock.release()`. The session timeout is the scenario's TTL;
kazoo keeps the session alive itself (its own ping thread, stopped with the process during a
client pause). The fencing token is the lock node's sequence number. No renew: kazoo has no
lease to extend."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from lockpick_protocol import fail, info, ok, serve  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402
from kazoo.exceptions import LockTimeout, NoNodeError, SessionExpiredError  # noqa: E402


def start(init):
    zk = KazooClient(
        hosts=",".join(init["nodes"]),
        timeout=init["ttl_ms"] / 1000,
    )
    zk.start(timeout=15)
    lock = zk.Lock("/locks/" + init["lock"], "lockpick-%d" % init["process"])

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
        # the lock promises its holder.
        return ok(token=token())

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
    }


serve(start)
