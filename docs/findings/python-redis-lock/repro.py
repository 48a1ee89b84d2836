"""Standalone reproduction: python-redis-lock 4.0.1's auto_renewal thread ends at the first
exception of extend(), and nothing tells the holder.

Mode "outage" (the bug): client 1 takes Lock("repro", expire=24, auto_renewal=True); the thread
would renew at 16 s. redis-server is killed (SIGKILL) at 15 s, so the renewal at 16 s gets
ConnectionError once redis-py's retries are spent and the thread dies. Only then is the server
restarted from its AOF (appendfsync always): the key is back, still client 1's, with its TTL
left. Nobody renews it; it expires at 24 s and client 2 acquires while client 1 has neither
released nor been told.

Mode "client-kill" (the control): Lock("repro", expire=6, auto_renewal=True); CLIENT KILL drops
client 1's connection 1 s before the renewal at 4 s. redis-py reconnects and retries, the
renewal succeeds: a dropped connection shorter than redis-py's retries is not enough.

Usage: python repro.py --conf REDIS_CONF --port PORT [outage|client-kill]
(repro.sh starts redis-server with REDIS_CONF, which names its pidfile; this program kills and
restarts that server in the "outage" mode.) Exit 1 when the bug shows, 0 when it does not.
"""

import argparse
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import redis
import redis_lock

T0 = time.monotonic()


def now():
    return f"{time.monotonic() - T0:6.2f} s"


def say(msg):
    print(f"[{now()}] {msg}", flush=True)


class Since(logging.Formatter):
    def format(self, record):
        return (f"[{record.created - T0_WALL:6.2f} s] log {record.name} in "
                f"{record.threadName!r}: {record.getMessage()}")


T0_WALL = time.time()
handler = logging.StreamHandler(sys.stdout)
handler.setFormatter(Since())
# The renewal threads' own debug lines ("Refreshing Lock", "Exiting renewal thread"): client 1's
# thread is Thread-1, client 2's Thread-2.
logging.getLogger("redis_lock.refresh.thread").setLevel(logging.DEBUG)
logging.getLogger("redis_lock.refresh.thread").addHandler(handler)
# Client 2 polls with acquire(blocking=False), which warns at every busy try: keep that quiet.
logging.getLogger("redis_lock.acquire").setLevel(logging.ERROR)

thread_died = {}
default_hook = threading.excepthook


def hook(args):
    thread_died[args.thread.name] = (time.monotonic() - T0, args.exc_type.__name__)
    say(f"threading.excepthook: thread {args.thread.name!r} ended by "
        f"{args.exc_type.__name__}: {args.exc_value}; Python's default hook prints:")
    sys.stdout.flush()
    default_hook(args)
    sys.stderr.flush()


threading.excepthook = hook


def threads():
    return ", ".join(sorted(t.name for t in threading.enumerate()))


def pttl(admin, key):
    return admin.pttl(key)


def wait_until(t):
    delay = t - (time.monotonic() - T0)
    if delay > 0:
        time.sleep(delay)


def port_open(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


def calls(admin, command):
    return admin.info("commandstats").get(f"cmdstat_{command}", {}).get("calls", 0)


def outage(conf, port):
    expire = 24
    pidfile = next(line.split()[1] for line in open(conf) if line.startswith("pidfile "))
    admin = redis.StrictRedis(port=port)
    c1 = redis.StrictRedis(port=port)  # default client settings: redis-py retries 10 times
    lock1 = redis_lock.Lock(c1, "repro", expire=expire, auto_renewal=True)
    key = "lock:repro"
    assert lock1.acquire()
    t_acq = time.monotonic() - T0
    renewer = lock1._lock_renewal_thread
    say(f"client 1: Lock('repro', expire={expire}, auto_renewal=True).acquire() -> True; "
        f"PTTL {pttl(admin, key)} ms; renewal every {expire * 2 / 3:.0f} s "
        f"(next at {t_acq + expire * 2 / 3:.2f} s) by thread {renewer.name!r}")
    say(f"threads: {threads()}")

    wait_until(t_acq + 15.0)
    say(f"PTTL {pttl(admin, key)} ms; renewal thread alive: {renewer.is_alive()}")
    pid = int(open(pidfile).read())
    os.kill(pid, signal.SIGKILL)
    while port_open(port):
        time.sleep(0.01)
    t_kill = time.monotonic() - T0
    say(f"redis-server (pid {pid}) killed with SIGKILL: client 1's connection is dropped, "
        f"the key is in the AOF (appendfsync always)")

    deadline = t_acq + expire * 2 / 3 + 10  # redis-py's retries take at most ~5.3 s
    while renewer.is_alive() and time.monotonic() - T0 < deadline:
        time.sleep(0.05)
    if renewer.is_alive():
        say("renewal thread still alive after the retries")
    else:
        say(f"renewal thread is dead: is_alive() -> False; threads: {threads()}")

    server = subprocess.Popen(["redis-server", conf], stdout=subprocess.DEVNULL)
    while not port_open(port):
        time.sleep(0.01)
    while True:
        try:
            admin.ping()
            break
        except (redis.ConnectionError, redis.BusyLoadingError):
            time.sleep(0.01)
    t_back = time.monotonic() - T0
    owner = admin.get(key)
    left = pttl(admin, key)
    whose = "still client 1's" if owner == lock1.id.encode() else f"now {owner!r}"
    say(f"redis-server restarted (pid {server.pid}) from its AOF: {key} is {whose}, "
        f"PTTL {left} ms")
    if renewer.is_alive():
        # What a fixed library would do: renew now that the server is back.
        time.sleep(expire * 2 / 3 + 1)
        say(f"not reproduced: the renewal thread survived the outage "
            f"(PTTL now {pttl(admin, key)} ms)")
        lock1.release()
        return 0
    if owner != lock1.id.encode() or left <= 0:
        say("not reproduced: the key did not survive the outage, so this run shows nothing "
            "about the renewal (the outage was too long for this machine)")
        return 0

    c2 = redis.StrictRedis(port=port)
    lock2 = redis_lock.Lock(c2, "repro", expire=expire, auto_renewal=True)
    next_report = time.monotonic() - T0
    got = False
    while time.monotonic() - T0 < t_acq + expire + 10:
        if lock2.acquire(blocking=False):
            got = True
            break
        if time.monotonic() - T0 >= next_report:
            say(f"PTTL {pttl(admin, key)} ms, owner client 1, calls since the restart: "
                f"EVALSHA {calls(admin, 'evalsha')}, EXPIRE {calls(admin, 'expire')} "
                f"(no renewal); client 2's acquire(blocking=False) -> False")
            next_report += 1
        time.sleep(0.1)
    if not got:
        say("not reproduced: client 2 never acquired")
        lock1.release()
        return 0
    t2 = time.monotonic() - T0
    say(f"client 2: acquire(blocking=False) -> True; {key} is now client 2's "
        f"(owner == lock2.id: {admin.get(key) == lock2.id.encode()}), PTTL {pttl(admin, key)} ms")
    say(f"client 1 has not released and nothing told it: lock1._lock_renewal_thread = "
        f"{lock1._lock_renewal_thread!r}, lock1.locked() -> {lock1.locked()} "
        f"(it says whether anyone holds the name); calls since the restart: "
        f"EVALSHA {calls(admin, 'evalsha')}, EXPIRE {calls(admin, 'expire')}")
    time.sleep(1)
    say("client 1 ends its critical section: lock1.release()")
    try:
        lock1.release()
        say("client 1: release() returned")
    except redis_lock.NotAcquired as e:
        say(f"client 1: release() raised NotAcquired({e}) - the first it hears of the loss")
    # The dead thread is still recorded on the Lock: reusing it fails after its SET won.
    lock2.release()
    try:
        lock1.acquire()
        say("client 1: acquire() again -> True")
    except redis_lock.AlreadyStarted as e:
        say(f"client 1: acquire() again raised AlreadyStarted({e}) after its SET won: {key} "
            f"owner == lock1.id: {admin.get(key) == lock1.id.encode()}, "
            f"PTTL {pttl(admin, key)} ms, no renewal thread")
    server.terminate()
    server.wait()
    print(f"BUG REPRODUCED: client 1's auto_renewal thread died at the first ConnectionError of "
          f"extend() (redis-server down from {t_kill:.1f} s to {t_back:.1f} s); the key survived "
          f"the restart but was never renewed, and client 2 acquired it at {t2:.2f} s while "
          f"client 1 still held its Lock, unreleased and untold", flush=True)
    return 1


def client_kill(port):
    expire = 6
    admin = redis.StrictRedis(port=port)
    c1 = redis.StrictRedis(port=port)
    lock1 = redis_lock.Lock(c1, "repro", expire=expire, auto_renewal=True)
    key = "lock:repro"
    assert lock1.acquire()
    t_acq = time.monotonic() - T0
    renewer = lock1._lock_renewal_thread
    cid = c1.client_id()
    say(f"client 1: Lock('repro', expire={expire}, auto_renewal=True).acquire() -> True; "
        f"PTTL {pttl(admin, key)} ms; renewals at {t_acq + 4:.2f} s, {t_acq + 8:.2f} s; "
        f"client 1's connection id {cid}")
    wait_until(t_acq + 3.0)
    killed = admin.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    say(f"CLIENT KILL TYPE normal SKIPME yes -> {killed} connection(s) dropped "
        f"(client 1's among them); PTTL {pttl(admin, key)} ms")
    wait_until(t_acq + 4.8)
    say(f"after the renewal at 4 s: PTTL {pttl(admin, key)} ms, EVALSHA calls "
        f"{calls(admin, 'evalsha')}, renewal thread alive: {renewer.is_alive()}, "
        f"client 1's connection id now {c1.client_id()} (reconnected)")
    wait_until(t_acq + 8.8)
    alive = renewer.is_alive()
    left = pttl(admin, key)
    say(f"after the renewal at 8 s: PTTL {left} ms, EVALSHA calls {calls(admin, 'evalsha')}, "
        f"renewal thread alive: {alive}")
    lock1.release()
    say("client 1: release() returned")
    if alive and left > 0 and not thread_died:
        print("not reproduced: a dropped connection (CLIENT KILL 1 s before the renewal) is "
              "absorbed by redis-py's retries: the renewals reconnected and extended the key, "
              "the thread lives and release() succeeded", flush=True)
        return 0
    print("BUG REPRODUCED: one CLIENT KILL ended the renewal thread", flush=True)
    return 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conf", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("mode", nargs="?", default="outage", choices=["outage", "client-kill"])
    a = ap.parse_args()
    say(f"python-redis-lock {redis_lock.__version__}, redis-py {redis.__version__}, "
        f"Python {sys.version.split()[0]}; mode {a.mode}")
    sys.exit(outage(a.conf, a.port) if a.mode == "outage" else client_kill(a.port))


if __name__ == "__main__":
    main()
