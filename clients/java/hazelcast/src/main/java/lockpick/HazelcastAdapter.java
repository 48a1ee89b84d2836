package lockpick;

import com.hazelcast.client.HazelcastClient;
import com.hazelcast.client.HazelcastClientOfflineException;
import com.hazelcast.client.config.ClientConfig;
import com.hazelcast.config.ListenerConfig;
import com.hazelcast.core.LifecycleEvent;
import com.hazelcast.core.LifecycleListener;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.cp.lock.FencedLock;
import com.hazelcast.cp.lock.exception.LockOwnershipLostException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import lockpick.Protocol.Adapter;
import lockpick.Protocol.Init;
import lockpick.Protocol.Keys;
import lockpick.Protocol.Reply;
import lockpick.Protocol.Values;

/**
 * lockpick adapter for Hazelcast's {@code FencedLock} (CP Subsystem), used as Hazelcast's
 * documentation shows: {@code HazelcastClient.newHazelcastClient(config)}, {@code
 * client.getCPSubsystem().getLock(name)}, {@code tryLockAndGetFence(time, unit)} and {@code
 * unlock()}. The token is the lock's fence, which Hazelcast documents as the value a resource
 * must check ("fencing token"); the lock's liveness is the CP session, whose TTL and heartbeat
 * are the members' settings (lockpick's {@code hazelcast} server kind), kept alive by the
 * client's own heartbeat thread, which a client pause stops with the rest of the JVM.
 *
 * <p>The same adapter runs on members with the CP Subsystem off ({@code hazelcast-unsafe}):
 * Hazelcast then serves the same API in its "unsafe mode", from the AP partitions. Which mode a
 * lock runs in is the members' configuration ({@code cp-member-count}), not the client's, so
 * there is no init option for it: the scenario picks the server kind.
 *
 * <p>The client is unisocket (smart routing off): it talks only to the addresses lockpick
 * gives it (the members' client proxies), never to the addresses the members advertise (their
 * own ports, past the proxies), so every byte it sends crosses a proxy a fault can cut.
 */
public final class HazelcastAdapter {
    /**
     * The {@code [client] init} keys this adapter takes. Which mode a lock runs in is not one
     * of them (see the class comment).
     */
    static final Keys KEYS = new Keys()
            .bool("one_member", false, "true: client k is given only member k mod N and keeps"
                    + " Hazelcast's default heartbeat timeout (60 s), so it stays with that member"
                    + " through a cut of the members' links (an application deployed beside each"
                    + " member, talking to its own); false: every member's address, of which the"
                    + " client picks one, and a 3 s heartbeat timeout to move on from a silent one");

    /**
     * How long init waits for the first connection, and then as long again for the lock's
     * group, before it answers (see start): within lockpick's 30 s (plus the op timeout) for a hello, JVM included.
     */
    static final long START_WAIT_S = 4;

    public static void main(String[] args) {
        Protocol.serve(HazelcastAdapter::start);
    }

    static Adapter start(Init init) throws Exception {
        Values keys = KEYS.read(init.extra);
        ClientConfig config = new ClientConfig();
        // The members' cluster name (harness/src/backends/hazelcast/process.rs).
        config.setClusterName("lockpick");
        config.getNetworkConfig().setSmartRouting(false);
        if (keys.bool("one_member") && !init.nodes.isEmpty()) {
            // The client slot, not the process: a process that replaces one after an unknown
            // outcome talks to the same member, as a restarted application beside it would.
            config.getNetworkConfig().addAddress(init.nodes.get((int) (init.client % init.nodes.size())));
        } else {
            for (String node : init.nodes) {
                config.getNetworkConfig().addAddress(node);
            }
        }
        // An op waits on the members at most this long (Hazelcast's default is 120 s, which
        // outlives a run): the wait for the lock, then one op's timeout for the answer.
        long invocationS = Math.max(2, (init.acquireTimeoutMs + init.opTimeoutMs + 999) / 1000);
        config.setProperty("hazelcast.client.invocation.timeout.seconds", String.valueOf(invocationS));
        // A member that stopped answering (paused, cut off) is given up after 3 s, not 60 s,
        // so the client moves to another member within a run.
        config.setProperty("hazelcast.client.heartbeat.interval", "1000");
        if (!keys.bool("one_member")) {
            config.setProperty("hazelcast.client.heartbeat.timeout", "3000");
        }
        config.setProperty("hazelcast.phone.home.enabled", "false");
        config.getConnectionStrategyConfig().getConnectionRetryConfig()
                .setInitialBackoffMillis(100)
                .setMaxBackoffMillis(1000)
                .setClusterConnectTimeoutMillis(Long.MAX_VALUE);
        // The client starts without waiting for the cluster and connects in the background
        // (Hazelcast's asyncStart), as an application must when it starts during an outage:
        // a client that replaces one mid-run, while a fault keeps the members from answering,
        // would otherwise not answer init in time (seen twice in 10 partition runs). Until it
        // is connected its requests are refused at once (HazelcastClientOfflineException),
        // never sent: a fail.
        config.getConnectionStrategyConfig().setAsyncStart(true);
        CountDownLatch connected = new CountDownLatch(1);
        config.addListenerConfig(new ListenerConfig((LifecycleListener) event -> {
            if (event.getState() == LifecycleEvent.LifecycleState.CLIENT_CONNECTED) {
                connected.countDown();
            }
        }));
        HazelcastInstance client = HazelcastClient.newHazelcastClient(config);
        // Getting the lock asks the cluster for its CP group, and the first call on it makes
        // that group ("default", by Raft rounds through the METADATA group): both done here,
        // before the hello, so that seconds of it on a loaded machine are not taken inside
        // the workload's first acquire, where a fault early in the run could find it half done
        // (seen: no grant in a whole run). Bounded, on a thread of its own, since during a cut
        // the group's members may not answer for longer than init may take: a client started
        // then still answers init, and its first request waits on the lock instead.
        Lazy lock = new Lazy(client, init.lock);
        Thread warmUp = new Thread(() -> {
            try {
                if (connected.await(START_WAIT_S, TimeUnit.SECONDS)) {
                    lock.get().isLocked();
                }
            } catch (RuntimeException | InterruptedException e) {
                System.err.println("adapter: the CP group was not reached at start: " + e);
            }
        }, "lockpick-warm-up");
        warmUp.setDaemon(true);
        warmUp.start();
        warmUp.join(TimeUnit.SECONDS.toMillis(2 * START_WAIT_S));

        return new Adapter("java-hazelcast-fenced-lock", FencedLock.class)
                .op("acquire", request -> {
                    long fence;
                    try {
                        fence = lock.get().tryLockAndGetFence(init.acquireTimeoutMs, TimeUnit.MILLISECONDS);
                    } catch (HazelcastClientOfflineException e) {
                        return Reply.fail("offline: not connected to the cluster yet, not sent");
                    }
                    // INVALID_FENCE: the wait ran out, Hazelcast says the lock was not taken.
                    if (fence == FencedLock.INVALID_FENCE) {
                        return Reply.fail("timeout-waiting");
                    }
                    // FencedLock claims no lease: the CP session is the members', renewed by
                    // the client's heartbeats for as long as the client lives.
                    return Reply.ok(fence, null, null);
                })
                .op("release", request -> {
                    try {
                        lock.get().unlock();
                    } catch (HazelcastClientOfflineException e) {
                        return Reply.fail("offline: not connected to the cluster, not sent");
                    } catch (LockOwnershipLostException e) {
                        // Hazelcast closed this client's CP session while it held the lock
                        // (its heartbeats stopped past the session TTL): the lock was freed
                        // then, not now.
                        return Reply.fail("not-owner: " + e.getMessage());
                    } catch (IllegalMonitorStateException e) {
                        // Hazelcast says the lock is not held by this session and thread.
                        return Reply.fail("not-owner");
                    }
                    return Reply.ok();
                });
    }

    /** The lock's proxy, got from the cluster on first use (getting it asks for its group). */
    static final class Lazy {
        private final HazelcastInstance client;
        private final String name;
        private volatile FencedLock lock;

        Lazy(HazelcastInstance client, String name) {
            this.client = client;
            this.name = name;
        }

        FencedLock get() {
            FencedLock l = lock;
            if (l == null) {
                l = client.getCPSubsystem().getLock(name);
                lock = l;
            }
            return l;
        }
    }
}
