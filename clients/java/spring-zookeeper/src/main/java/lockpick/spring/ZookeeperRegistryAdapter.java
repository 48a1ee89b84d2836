package lockpick.spring;

import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import lockpick.Protocol;
import lockpick.Protocol.Adapter;
import lockpick.Protocol.Init;
import lockpick.Protocol.Keys;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.springframework.integration.zookeeper.lock.ZookeeperLockRegistry;

/**
 * lockpick adapter for Spring Integration's {@code ZookeeperLockRegistry} on a ZooKeeper
 * ensemble (every node, through its proxy), used as the reference ("Zookeeper Lock Registry")
 * shows: a started {@code CuratorFramework}, {@code new ZookeeperLockRegistry(client, root)},
 * {@code obtain(key)}, {@code tryLock(time, unit)} and {@code unlock()}. Each lock is a Curator
 * {@code InterProcessMutex} under {@code <root>/<key>}: an ephemeral sequential node, the lowest
 * holds it, for as long as the session lives. The session timeout is the scenario's {@code
 * ttl_ms}; the CuratorFramework is built as Curator's docs show (an {@code
 * ExponentialBackoffRetry(1000, 3)}), since Spring's CuratorFrameworkFactoryBean sets no
 * session timeout of its own.
 *
 * <p>The registry exposes no sequence number (no token) and no connection state: its unlock is
 * Curator's release, which takes a node already gone with its expired session as released, so
 * a holder that lost its session unlocks "ok". Curator's connection state changes go to stderr
 * (clients/p&lt;process&gt;.stderr) for the record.
 */
public final class ZookeeperRegistryAdapter {
    static final Keys KEYS = new Keys();

    public static void main(String[] args) {
        Protocol.serve(ZookeeperRegistryAdapter::start);
    }

    static Adapter start(Init init) throws Exception {
        KEYS.read(init.extra);
        long born = System.nanoTime();
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(String.join(",", init.nodes))
                .sessionTimeoutMs((int) init.ttlMs)
                .retryPolicy(new ExponentialBackoffRetry(1000, 3))
                .build();
        client.getConnectionStateListenable().addListener((c, state) -> System.err.printf(
                "spring-zookeeper: connection state %s at %s (%d ms after the adapter started)%n", state,
                LocalTime.now().truncatedTo(ChronoUnit.MILLIS),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - born)));
        client.start();
        if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no ZooKeeper connection within 10 s to " + init.nodes);
        }
        ZookeeperLockRegistry registry = new ZookeeperLockRegistry(client, "/locks");
        Lock lock = registry.obtain(init.lock);

        return new Adapter("java-spring-zookeeper-lock-registry", ZookeeperLockRegistry.class)
                // false: the wait ran out (Curator deleted the node it had queued), or the
                // registry's connection check did not answer within the wait.
                .op("acquire", request -> RegistryLock.acquire(lock, init.acquireTimeoutMs))
                // Curator's own books say this thread holds nothing: nothing was released.
                .op("release", request -> RegistryLock.release(lock, "spring-zookeeper",
                        e -> e.getCause() instanceof IllegalMonitorStateException));
    }
}
