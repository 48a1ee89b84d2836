"""The lockpick client protocol (docs/client-protocol.md), version 1, for Python adapters:
reads JSON lines from stdin and answers one request at a time on stdout. Diagnostics go to
stderr; stdout carries protocol lines only."""
import json
import sys
from importlib.metadata import version as installed_version

PROTOCOL = 1


def _write(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def ok(token=None, lease_ms=None, note=None):
    reply = {"type": "ok", "token": token, "lease_ms": lease_ms}
    if note is not None:
        reply["note"] = note
    return reply


def fail(reason):
    return {"type": "fail", "reason": reason}


def info(reason):
    return {"type": "info", "reason": reason}


def serve(start):
    """`start(init)` builds the lock from the init message and returns a dict with adapter,
    library (its distribution name, whose installed version is reported) and ops: a dict of
    "acquire", "release" and optionally "renew", each a function of the request returning
    ok(...), fail(reason) or info(reason). An exception from an op is `info`."""
    adapter = None
    for line in sys.stdin:
        request = json.loads(line)
        if request["type"] == "init":
            adapter = start(request)
            _write({
                "type": "hello",
                "id": request["id"],
                "protocol": PROTOCOL,
                "adapter": adapter["adapter"],
                "library": adapter["library"],
                "version": installed_version(adapter["library"]),
                "ops": list(adapter["ops"]),
            })
            continue
        op = adapter["ops"][request["type"]]
        try:
            reply = op(request)
        except Exception as e:  # the outcome of a request that raised is unknown
            print(f"adapter: {request['type']} raised {e!r}", file=sys.stderr, flush=True)
            reply = info(f"{type(e).__name__}: {e}")
        reply["id"] = request["id"]
        _write(reply)


def host_port(address):
    host, port = address.rsplit(":", 1)
    return host, int(port)
