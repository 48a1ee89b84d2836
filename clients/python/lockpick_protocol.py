"""The lockpick client protocol (docs/client-protocol.md), versions 1 and 2, for Python
adapters: reads JSON lines from stdin and answers one request at a time on stdout; an adapter
whose library tells its user of a lost lock declares `events` and calls `event(...)` from the
library's callback (version 2). Diagnostics go to stderr; stdout carries protocol lines only."""
import json
import os
import sys
import threading
from importlib.metadata import version as installed_version

PROTOCOL = 1  # an adapter that sends no events
PROTOCOL_EVENTS = 2  # one that declares `events`
EVENTS = ("lost", "suspended", "reconnected")
# Guards stdout: a library's thread writes events while the main one writes replies. Events
# told before the hello wait in _early and go out right after it.
_writing = threading.Lock()
_early = []
_hello_sent = False
# Whether this lockpick takes events (its init's newest_protocol is 2 or more) and the adapter
# declared some: otherwise `event` sends nothing.
_events_on = False
MANIFEST = "lockpick-adapter.json"
_TYPES = {
    "bool": ("a boolean", lambda v: isinstance(v, bool)),
    "integer": ("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "number": ("a number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)),
    "string": ("a string", lambda v: isinstance(v, str)),
}


def _declaration():
    """The adapter's lockpick-adapter.json (the init options it takes), found as lockpick finds
    it: beside the adapter script or up to two folders above; None if it has none."""
    folder = os.path.dirname(os.path.realpath(sys.argv[0]))
    for _ in range(3):
        path = os.path.join(folder, MANIFEST)
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                return path, json.load(f).get("init", {})
        folder = os.path.dirname(folder)
    return None


def refused(extra):
    """Why the init options `extra` are not what this adapter declares, or None. An adapter
    without a declaration takes its extra as it is."""
    declared = _declaration()
    if declared is None:
        return None
    path, types = declared
    allowed = ", ".join(f"{k} ({t})" for k, t in sorted(types.items())) or "none"
    for key, value in extra.items():
        if key not in types:
            return f"init.{key}: the adapter takes no such option; allowed: {allowed} ({path})"
        name, fits = _TYPES[types[key]]
        if not fits(value):
            return f"init.{key}: {json.dumps(value)} is not allowed; allowed: {name} ({path})"
    return None


def _write(message):
    with _writing:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def event(name, token=None, reason=None):
    """Tells lockpick, unasked, what the library just told its user: `name` is one of EVENTS
    the adapter declared in `events`; `token` and `reason` are optional. Safe from any thread."""
    if name not in EVENTS:
        raise ValueError(f"event {name!r}: allowed: {', '.join(EVENTS)}")
    line = {"type": "event", "event": name, "token": token}
    if reason is not None:
        line["reason"] = str(reason)
    with _writing:
        if not _hello_sent:
            _early.append(line)
            return
        if not _events_on:
            return
    _write(line)


def ok(token=None, lease_ms=None, note=None, owner=None):
    """It happened. On an acquire, `owner` is the value by which the lock's server knows this
    holder, when the library says it (docs/server-record.md): never one the adapter computed."""
    reply = {"type": "ok", "token": token, "lease_ms": lease_ms}
    if note is not None:
        reply["note"] = note
    if owner is not None:
        reply["owner"] = owner
    return reply


def fail(reason):
    return {"type": "fail", "reason": reason}


def info(reason):
    return {"type": "info", "reason": reason}


def _version(adapter):
    """(version, None) for the hello: the dict's own `version` if it gives one (a lock of your
    own, which no installed package names), else the installed version of its `library`
    distribution; (None, why) when neither is there."""
    if adapter.get("version") is not None:
        return str(adapter["version"]), None
    try:
        return installed_version(adapter["library"]), None
    except Exception:  # importlib.metadata.PackageNotFoundError, or a name that is not one
        return None, (
            f"library {adapter['library']!r} is not an installed distribution, so its version "
            "cannot be read: name the package the lock is built on (e.g. \"redis\" for "
            "redis-py), or give \"version\" beside \"library\" in the dict start returns "
            "(your own lock's version)")


def serve(start):
    """`start(init)` builds the lock from the init message and returns a dict with adapter,
    library (its distribution name, whose installed version is reported, unless the dict
    gives its own version: a lock of your own that no package names), ops: a dict of
    "acquire", "release" and optionally "renew", each a function of the request returning
    ok(...), fail(reason) or info(reason), and optionally events: the names it may send with
    `event` (protocol 2). An exception from an op is `info`. Init options
    (`extra`) that the adapter's lockpick-adapter.json does not declare, or of another type,
    are answered with a `fail` before `start` is called: never a silent default."""
    global _hello_sent, _events_on
    adapter = None
    for line in sys.stdin:
        request = json.loads(line)
        if request["type"] == "init":
            why = refused(request.get("extra", {}))
            if why is not None:
                _write({"type": "fail", "id": request["id"], "reason": why})
                continue
            adapter = start(request)
            version, why = _version(adapter)
            if why is not None:
                print(f"adapter: {why}", file=sys.stderr, flush=True)
                _write({"type": "fail", "id": request["id"], "reason": why})
                continue
            # init's `protocol` is the oldest version lockpick speaks (1, which every adapter
            # takes); `newest_protocol`, the newest: events need 2.
            newest = request.get("newest_protocol", request.get("protocol", PROTOCOL))
            events_on = bool(adapter.get("events")) and newest >= PROTOCOL_EVENTS
            if adapter.get("events") and not events_on:
                print(f"adapter: lockpick speaks protocol {newest} at most: no events sent",
                      file=sys.stderr, flush=True)
            hello = {
                "type": "hello",
                "id": request["id"],
                "protocol": PROTOCOL_EVENTS if events_on else PROTOCOL,
                "adapter": adapter["adapter"],
                "library": adapter["library"],
                "version": version,
                "ops": list(adapter["ops"]),
            }
            if events_on:
                hello["events"] = list(adapter["events"])
            _write(hello)
            with _writing:
                _hello_sent = True
                _events_on = events_on
                early = list(_early) if events_on else []
                _early.clear()
            for message in early:
                _write(message)
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
