package lockpick;

import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import lockpick.Protocol.Adapter;
import lockpick.Protocol.BadInit;
import lockpick.Protocol.Init;
import lockpick.Protocol.Keys;
import lockpick.Protocol.Reply;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * lockpick adapter for Apache Curator's lock recipes on a ZooKeeper ensemble (every node, through
 * its proxy), used as Curator's documentation shows: {@code CuratorFrameworkFactory} with an
 * {@code ExponentialBackoffRetry(1000, 3)}, {@code client.start()}, {@code new
 * InterProcessMutex(client, path)} (or {@code InterProcessSemaphoreMutex}), {@code
 * acquire(time, unit)} and {@code release()}. The session timeout is the scenario's {@code
 * ttl_ms}; ZooKeeper's client keeps the session alive with its own heartbeat thread, which a
 * client pause stops with the rest of the JVM.
 *
 * <p>Curator's docs tell a lock's user to watch the connection state: SUSPENDED means the lock
 * may be gone, LOST that it is. The listener tells lockpick each of SUSPENDED, LOST and
 * RECONNECTED as it is reported (protocol 2 events, in the history as notices), writes it to
 * stderr (clients/p&lt;process&gt;.stderr), and the release of a lock held across a LOST is
 * {@code fail "lost: …"}.
 */
public final class CuratorAdapter {
    /** The {@code [client] init} keys this adapter takes. */
    static final Keys KEYS = new Keys()
            .bool("semaphore", false, "true: InterProcessSemaphoreMutex (a one-lease semaphore,"
                    + " not reentrant; no token); false: InterProcessMutex (an ephemeral sequential"
                    + " node, the lowest holds; its sequence number is the token)");

    /** {@code getLockPath()} is protected: Curator offers it to subclasses only. */
    static final class Mutex extends InterProcessMutex {
        Mutex(CuratorFramework client, String path) {
            super(client, path);
        }

        String ourPath() {
            return getLockPath();
        }
    }

    private static final Pattern SEQUENCE = Pattern.compile("(\\d+)$");

    public static void main(String[] args) {
        Protocol.serve(CuratorAdapter::start);
    }

    static Adapter start(Init init) throws Exception {
        boolean semaphore = KEYS.read(init.extra).bool("semaphore");
        long born = System.nanoTime();
        // When (System.nanoTime) the listener's thread was last told LOST; born: never.
        AtomicLong lostAt = new AtomicLong(born);

        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(String.join(",", init.nodes))
                .sessionTimeoutMs((int) init.ttlMs)
                .retryPolicy(new ExponentialBackoffRetry(1000, 3))
                .build();
        client.getConnectionStateListenable().addListener((c, state) -> {
            long now = System.nanoTime();
            long at = TimeUnit.NANOSECONDS.toMillis(now - born);
            if (state == ConnectionState.LOST) {
                lostAt.set(now);
            }
            String event = state == ConnectionState.LOST ? "lost"
                    : state == ConnectionState.SUSPENDED ? "suspended"
                    : state == ConnectionState.RECONNECTED ? "reconnected"
                    : null;
            if (event != null) {
                Protocol.event(event, null, "connection state " + state);
            }
            System.err.printf("curator: connection state %s at %s (%d ms after the adapter started)%n",
                    state, LocalTime.now().truncatedTo(ChronoUnit.MILLIS), at);
        });
        client.start();
        if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no ZooKeeper connection within 10 s to " + init.nodes);
        }
        String path = "/locks/" + init.lock;
        InterProcessLock lock = semaphore ? new InterProcessSemaphoreMutex(client, path) : new Mutex(client, path);
        long[] acquiredAt = {born};

        String adapter = semaphore ? "java-curator-semaphore-mutex" : "java-curator-mutex";
        return new Adapter(adapter, InterProcessMutex.class)
                .events("lost", "suspended", "reconnected")
                .op("acquire", request -> {
                    // false: the wait ran out and Curator deleted the node it had queued.
                    if (!lock.acquire(init.acquireTimeoutMs, TimeUnit.MILLISECONDS)) {
                        return Reply.fail("timeout-waiting");
                    }
                    acquiredAt[0] = System.nanoTime();
                    Long token = null;
                    if (lock instanceof Mutex) {
                        Matcher m = SEQUENCE.matcher(String.valueOf(((Mutex) lock).ourPath()));
                        token = m.find() ? Long.valueOf(m.group(1)) : null;
                    }
                    // Curator's locks claim no lease (the session timeout is the server's, not
                    // a validity the lock promises its holder): none reported.
                    return Reply.ok(token, null, null);
                })
                .op("release", request -> {
                    if (!lock.isAcquiredInThisProcess()) {
                        return Reply.fail("not-owner");
                    }
                    // Always through the library: it also clears its books of the hold, or
                    // the next acquire would re-enter a lock it no longer has.
                    try {
                        lock.release();
                    } catch (IllegalMonitorStateException | IllegalStateException e) {
                        // Curator's own books say this thread holds nothing.
                        return Reply.fail("not-owner");
                    }
                    // Curator deletes the node with guaranteed() and takes a node already gone
                    // (its session expired) as released. Its docs say LOST means the lock is
                    // certainly gone: if it said so during this hold, the release freed
                    // nothing of ours.
                    long lost = lostAt.get();
                    if (lost - acquiredAt[0] > 0) {
                        long after = TimeUnit.NANOSECONDS.toMillis(lost - acquiredAt[0]);
                        return Reply.fail("lost: curator reported LOST " + after + " ms after the grant");
                    }
                    return Reply.ok();
                });
    }
}
