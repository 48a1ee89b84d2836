"""What differs in pottery's Redlock API between the releases ./adapter.py runs: pottery 1.0 and
later (3.0.1, the adapter's default) and the 0.x releases of the known-bug catalogue (0.42 and
0.43, clients/python/pinned/pottery-<release>/). Chosen by the installed release's major
version (its package metadata). In 0.x, `auto_release_time` counts milliseconds, not seconds,
and `extend()` returns False when it did not win a quorum instead of
raising `ExtendUnlockedLock` (which 0.x does not have); `Redlock(key=, masters=,
auto_release_time=)`, `acquire(blocking=, timeout=seconds)`, `release()` raising
`ReleaseUnlockedLock` and `extend()` raising `TooManyExtensions` are the same."""
from importlib.metadata import version

LEGACY = int(version("pottery").split(".")[0]) == 0

if LEGACY:

    def auto_release_time(ttl_ms):
        return ttl_ms

    def extend(lock):
        """Whether pottery extended the lock."""
        return bool(lock.extend())

else:
    from pottery.exceptions import ExtendUnlockedLock

    def auto_release_time(ttl_ms):
        return ttl_ms / 1000

    def extend(lock):
        """Whether pottery extended the lock."""
        try:
            lock.extend()
        except ExtendUnlockedLock:
            return False
        return True
