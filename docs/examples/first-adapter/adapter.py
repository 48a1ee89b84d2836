import json, sys, time, uuid
import redis

for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "init":
        host, port = req["nodes"][0].rsplit(":", 1)      # the proxy in front of node n1
        r = redis.Redis(host=host, port=int(port))
        key, ttl, wait = "mylock:" + req["lock"], req["ttl_ms"], req["acquire_timeout_ms"] / 1000
        reply = {"type": "hello", "protocol": 2, "adapter": "my-adapter", "library": "redis-py",
                 "version": redis.__version__, "ops": ["acquire", "release"], "events": []}
    elif req["type"] == "acquire":
        value, deadline = uuid.uuid4().hex, time.monotonic() + wait
        while not r.set(key, value, nx=True, px=ttl):
            if time.monotonic() > deadline:
                reply = {"type": "fail", "reason": "timeout-waiting"}
                break
            time.sleep(0.01)
        else:
            # No token, and no lease: SET PX does not say. `owner`: the value the server
            # holds, so that lockpick can tell whose the key it watches is.
            reply = {"type": "ok", "token": None, "lease_ms": None, "owner": value}
    elif req["type"] == "release":
        ours = r.eval("if redis.call('GET', KEYS[1]) == ARGV[1] then "
                      "return redis.call('DEL', KEYS[1]) end return 0", 1, key, value)
        reply = {"type": "ok"} if ours else {"type": "fail", "reason": "not-owner"}
    reply["id"] = req["id"]
    print(json.dumps(reply), flush=True)                # stdout: protocol lines only
