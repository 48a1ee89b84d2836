package lockpick;

import java.util.concurrent.TimeUnit;
import lockpick.Protocol.Adapter;
import lockpick.Protocol.BadInit;
import lockpick.Protocol.Init;
import lockpick.Protocol.Keys;
import lockpick.Protocol.Reply;
import lockpick.Protocol.Values;
import org.redisson.Redisson;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * lockpick adapter for Redisson's locks on one Redis server (the first node, through its
 * proxy), used as Redisson's documentation shows: a {@code Config} with
 * {@code useSingleServer().setAddress("redis://host:port")}, {@code Redisson.create(config)},
 * {@code redisson.getLock(name)} or {@code redisson.getFencedLock(name)}, then
 * {@code tryLock(waitTime, unit)} (the watchdog keeps the lease) or
 * {@code tryLock(waitTime, leaseTime, unit)} (a fixed lease, no watchdog), and {@code unlock()}.
 *
 * <p>{@code tryLock(waitTime, …)} rather than {@code lock()}: the same lock and the same
 * watchdog, but a wait bounded by the scenario's acquire timeout, as lockpick's protocol
 * needs (a {@code lock()} that waits forever would be killed as a timeout).
 *
 * <p>The watchdog's lease is Redisson's {@code lockWatchdogTimeout} (default 30 s), set here to
 * the scenario's {@code ttl_ms}: the key expires after it and the watchdog, a timer inside this
 * JVM, renews it every third of it while the lock is held.
 */
public final class RedissonAdapter {
    /** The {@code [client] init} keys this adapter takes. */
    static final Keys KEYS = new Keys()
            .bool("watchdog", true, "true: tryLock(wait) with Redisson's lock watchdog"
                    + " (lockWatchdogTimeout = ttl_ms, renewed every third); false: tryLock(wait, ttl_ms),"
                    + " a fixed lease, no watchdog")
            .bool("fenced", false, "true: RFencedLock (getFencedLock), its token the fencing token;"
                    + " false: RLock (getLock), no token");

    public static void main(String[] args) {
        Protocol.serve(RedissonAdapter::start);
    }

    static Adapter start(Init init) throws BadInit {
        Values keys = KEYS.read(init.extra);
        boolean watchdog = keys.bool("watchdog");
        boolean fenced = keys.bool("fenced");

        Config config = new Config();
        config.setLockWatchdogTimeout(init.ttlMs);
        config.useSingleServer().setAddress("redis://" + init.nodes.get(0));
        RedissonClient redisson = Redisson.create(config);
        String name = "lockpick:lock:" + init.lock;
        RLock lock = fenced ? redisson.getFencedLock(name) : redisson.getLock(name);
        long wait = init.acquireTimeoutMs;
        long lease = init.ttlMs;

        String adapter = "java-redisson-" + (fenced ? "fenced-lock" : "lock") + (watchdog ? "-watchdog" : "-lease");
        return new Adapter(adapter, Redisson.class)
                .op("acquire", request -> {
                    Long token = null;
                    boolean got;
                    if (fenced) {
                        RFencedLock f = (RFencedLock) lock;
                        token = watchdog
                                ? f.tryLockAndGetToken(wait, TimeUnit.MILLISECONDS)
                                : f.tryLockAndGetToken(wait, lease, TimeUnit.MILLISECONDS);
                        got = token != null;
                    } else {
                        got = watchdog
                                ? lock.tryLock(wait, TimeUnit.MILLISECONDS)
                                : lock.tryLock(wait, lease, TimeUnit.MILLISECONDS);
                    }
                    // false (null): the wait ran out; Redisson gave up its subscription and
                    // holds nothing.
                    if (!got) {
                        return Reply.fail("timeout-waiting");
                    }
                    // The lease Redisson says the lock has left: remainTimeToLive() (the key's
                    // PTTL; -2 when the key is already gone, -1 when it has no expiry).
                    long left = lock.remainTimeToLive();
                    return Reply.ok(token, left == -1 ? null : Math.max(0, left), null);
                })
                .op("release", request -> {
                    try {
                        lock.unlock();
                        return Reply.ok();
                    } catch (IllegalMonitorStateException e) {
                        // The unlock script found no entry of ours in the lock's hash: the key
                        // expired or another holder has it. Redisson makes a retried unlock
                        // idempotent (its unlock latch), so this is the server's answer.
                        System.err.println("redisson: unlock: " + e.getMessage());
                        return Reply.fail("not-owner");
                    }
                });
    }
}
