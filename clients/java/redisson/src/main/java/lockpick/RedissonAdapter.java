package lockpick;

import io.netty.resolver.DefaultAddressResolverGroup;
import java.util.concurrent.TimeUnit;
import lockpick.Protocol.Adapter;
import lockpick.Protocol.BadInit;
import lockpick.Protocol.Init;
import lockpick.Protocol.Keys;
import lockpick.Protocol.Reply;
import lockpick.Protocol.Values;
import org.redisson.Redisson;
import org.redisson.api.HostPortNatMapper;
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
 *
 * <p>With {@code multi = true}, Redisson's MultiLock over every node, as its docs show it
 * ("MultiLock": RLock objects that may each belong to a different Redisson instance, grouped
 * by {@code getMultiLock(lock1, lock2, …)} and handled as one lock): one Redisson client per
 * node, {@code getLock(name)} on each, {@code getMultiLock(...)} of them. It holds only when
 * every one of the locks is taken. Redisson's RedLock ({@code getRedLock}, a majority) is
 * deprecated, its docs say, superseded by RLock and RFencedLock; MultiLock is not.
 *
 * <p>On a {@code redis-sentinel} server (the init carries {@code sentinels}), one Redisson client
 * in Sentinel mode, as its docs configure it: {@code config.useSentinelServers().setMasterName(…)
 * .addSentinelAddress("redis://host:port", …)}. Redisson then asks the sentinels for the master
 * and follows it on a failover. The addresses the sentinels answer are mapped to the nodes'
 * proxies by the init's NAT map, given as Redisson's docs give one ({@code natMapper}, its
 * {@code HostPortNatMapper}), as a user behind a NAT would (docs/client-protocol.md).
 *
 * <p>{@code check_lock_synced_slaves} is Redisson's {@code checkLockSyncedSlaves} (default true,
 * as Redisson's): after each lock write Redisson sends {@code WAIT <replicas> slavesSyncTimeout}
 * (1000 ms) for the replicas the master reports, and when none acknowledged it undoes the write
 * (unlock) and retries, up to {@code retryAttempts}, then throws
 * {@code NoSyncedSlavesException} (answered as {@code info}: whether the undo took is not said).
 *
 * <p>No events (protocol 1): Redisson tells its user nothing when the watchdog loses the lock.
 * {@code RLock}/{@code RFencedLock} (3.52.0) have no listener or callback for it; the
 * watchdog's renewal task ({@code org.redisson.renewal.RenewalTask}) logs "Can't update locks
 * {} expiration" through slf4j when a renewal errs, and when the renewal script finds the key
 * no longer ours it drops the lock from renewal silently. The holder learns only from a later
 * {@code unlock()} ({@code IllegalMonitorStateException}) or {@code isHeldByCurrentThread()}.
 */
public final class RedissonAdapter {
    /** The {@code [client] init} keys this adapter takes. */
    static final Keys KEYS = new Keys()
            .bool("watchdog", true, "true: tryLock(wait) with Redisson's lock watchdog"
                    + " (lockWatchdogTimeout = ttl_ms, renewed every third); false: tryLock(wait, ttl_ms),"
                    + " a fixed lease, no watchdog")
            .bool("fenced", false, "true: RFencedLock (getFencedLock), its token the fencing token;"
                    + " false: RLock (getLock), no token")
            .bool("multi", false, "true: getMultiLock of one RLock per node, each on its own Redisson"
                    + " client (all must be taken); false: one RLock on the first node, or on the master"
                    + " the sentinels name on a redis-sentinel server")
            .bool("check_lock_synced_slaves", true, "Redisson's checkLockSyncedSlaves: after each lock"
                    + " write, WAIT for the master's replicas (slavesSyncTimeout, 1 s); none acknowledged:"
                    + " the write is undone and retried, then NoSyncedSlavesException");

    public static void main(String[] args) {
        Protocol.serve(RedissonAdapter::start);
    }

    static Adapter start(Init init) throws BadInit {
        Values keys = KEYS.read(init.extra);
        boolean watchdog = keys.bool("watchdog");
        boolean fenced = keys.bool("fenced");
        boolean multi = keys.bool("multi");
        boolean checkSynced = keys.bool("check_lock_synced_slaves");

        if (multi && init.sentinels != null) {
            throw new BadInit("init.multi: true is not allowed on a redis-sentinel server (init.sentinels"
                    + " names one master, and a MultiLock needs a Redisson client per master); allowed: false");
        }
        if (multi && fenced) {
            throw new BadInit("init: multi and fenced cannot both be true: a MultiLock groups RLocks and"
                    + " gives no token");
        }
        String name = "lockpick:lock:" + init.lock;
        RLock lock;
        RLock[] locks = new RLock[0];
        // Redisson's id for its client (RedissonClient.getId()), the first part of the lock
        // hash's field; null for a MultiLock.
        final String clientId;
        if (multi) {
            RedissonClient[] clients = new RedissonClient[init.nodes.size()];
            locks = new RLock[clients.length];
            for (int i = 0; i < locks.length; i++) {
                clients[i] = client(init, init.nodes.get(i), true, checkSynced);
                locks[i] = clients[i].getLock(name);
            }
            // "anyRedisson.getMultiLock(lock1, lock2, …)": any of the clients.
            lock = clients[0].getMultiLock(locks);
            clientId = null;
        } else {
            RedissonClient redisson = client(init, init.nodes.get(0), false, checkSynced);
            lock = fenced ? redisson.getFencedLock(name) : redisson.getLock(name);
            clientId = redisson.getId();
        }
        RLock[] subLocks = locks;
        long wait = init.acquireTimeoutMs;
        long lease = init.ttlMs;

        String adapter = "java-redisson-" + (multi ? "multi-lock" : fenced ? "fenced-lock" : "lock")
                + (watchdog ? "-watchdog" : "-lease");
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
                    // No lease claim: tryLock answers true (tryLockAndGetToken a token) and
                    // nothing about how long. Asking the server (remainTimeToLive(), the key's
                    // PTTL whoever holds it) is one more round trip before the grant is
                    // reported: under latency or a cut (Redisson retries it as a read) the
                    // grant then reached lockpick after its key had expired, and the trusting
                    // client wrote on it, a double holder the adapter made (10-seed library
                    // matrix: latency and partition cells of the three RLock rows).
                    Reply granted = Reply.ok(token, null, null);
                    // The lock is a hash whose field is the client's id and the locking thread's
                    // ("<getId()>:<threadId>", Redisson's lock docs: an RLock's owner is its
                    // client and thread): the server's record knows this holder by it. A
                    // MultiLock's sub-locks each have their own client's id: none named.
                    return clientId == null ? granted
                            : granted.owner(clientId + ":" + Thread.currentThread().getId());
                })
                .op("release", request -> {
                    try {
                        // lock.unlock(): the version shim only unwraps what 3.27.1's MultiLock
                        // threw (src/redisson-<api>/lockpick/RedissonApi.java).
                        RedissonApi.unlock(lock);
                        return Reply.ok();
                    } catch (IllegalMonitorStateException e) {
                        System.err.println("redisson: unlock: " + e.getMessage());
                        if (multi) {
                            return multiUnlockFailed(subLocks);
                        }
                        // The unlock script found no entry of ours in the lock's hash: the key
                        // expired or another holder has it. Redisson makes a retried unlock
                        // idempotent (its unlock latch), so this is the server's answer.
                        return Reply.fail("not-owner");
                    }
                });
    }

    /**
     * The reply to a MultiLock {@code unlock()} that threw. {@code RedissonMultiLock.unlock()}
     * (3.52.0: {@code locks.forEach(RLock::unlock)}) unlocks the sub-locks in order and stops at
     * the first one this thread no longer holds (its key expired, or a server restarted empty):
     * those before it were released by this call, those after it are left held, and renewed
     * by the watchdog. So the exception alone does not say whether the lock was released.
     * Each sub-lock is asked afterwards (only on this path, so a release that succeeds pays no
     * round trip): one still held means the MultiLock still keeps every rival out, and the
     * release did not happen ({@code not-owner}); none still held means this call released
     * those before the one that was gone, or nothing if the first was gone, which cannot be
     * told apart from here: the outcome is unknown ({@code info}), never a claim either way.
     * Up to 3.27.1 (a line of pinned-releases), {@code unlock()} sent every sub-lock its
     * {@code unlockAsync()} before it threw, so this finds none held: {@code info} too.
     */
    private static Reply multiUnlockFailed(RLock[] subLocks) {
        StringBuilder held = new StringBuilder();
        for (int i = 0; i < subLocks.length; i++) {
            boolean mine;
            try {
                mine = subLocks[i].isHeldByCurrentThread();
            } catch (RuntimeException e) {
                return Reply.info("MultiLock unlock stopped at a sub-lock no longer held, and server "
                        + (i + 1) + " could not be asked whether its sub-lock is still held: " + e.getMessage());
            }
            if (mine) {
                held.append(held.length() == 0 ? "" : ", ").append("n").append(i + 1);
            }
        }
        if (held.length() > 0) {
            System.err.println("redisson: MultiLock unlock stopped at a sub-lock no longer held;"
                    + " still held (and renewed): " + held);
            return Reply.fail("not-owner");
        }
        return Reply.info("MultiLock unlock stopped at a sub-lock no longer held and none is held"
                + " now: the sub-locks before it were released by this call, or none was if the first"
                + " was already gone");
    }

    /**
     * A Redisson client of one server, or of the master the init's sentinels name, as Redisson's
     * docs build it. {@code small}: one of several clients in this JVM (MultiLock). Each then
     * opens 1 idle connection instead of Redisson's default 24 (connectionMinimumIdleSize, and 1
     * of its subscription connections): five default clients open 120+ connections and 5 x 32
     * Netty threads before the hello, which on a loaded 2-core machine took longer than
     * lockpick's start limit (15 s then; 30 s plus the op timeout now). Pool sizes only; the lock's code paths are Redisson's defaults.
     */
    private static RedissonClient client(Init init, String node, boolean small, boolean checkSynced) {
        Config config = new Config();
        config.setLockWatchdogTimeout(init.ttlMs);
        config.setCheckLockSyncedSlaves(checkSynced);
        // The JDK's resolver instead of Redisson's default Netty DNS resolver, which opens UDP
        // sockets on the wildcard address (0.0.0.0) at start though the address is a literal
        // 127.0.0.1 that needs no lookup: lockpick's processes stay on loopback. Resolving only;
        // the lock's code paths are Redisson's defaults.
        config.setAddressResolverGroupFactory(
                (datagram, socket, nameServers) -> DefaultAddressResolverGroup.INSTANCE);
        if (init.sentinels != null) {
            var sentinel = config.useSentinelServers().setMasterName(init.sentinels.master);
            for (String address : init.sentinels.addrs) {
                sentinel.addSentinelAddress("redis://" + address);
            }
            HostPortNatMapper nat = new HostPortNatMapper();
            nat.setHostsPortMap(init.sentinels.nat);
            sentinel.setNatMapper(nat);
            return Redisson.create(config);
        }
        var server = config.useSingleServer().setAddress("redis://" + node);
        if (small) {
            server.setConnectionMinimumIdleSize(1).setSubscriptionConnectionMinimumIdleSize(1);
        }
        return Redisson.create(config);
    }
}
