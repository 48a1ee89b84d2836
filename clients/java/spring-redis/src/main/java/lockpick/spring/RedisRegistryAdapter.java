package lockpick.spring;

import io.lettuce.core.resource.ClientResources;
import io.netty.resolver.DefaultAddressResolverGroup;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import lockpick.Protocol;
import lockpick.Protocol.Adapter;
import lockpick.Protocol.Init;
import lockpick.Protocol.Keys;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * lockpick adapter for Spring Integration's {@code RedisLockRegistry} on one Redis server (the
 * first node, through its proxy), used as Spring Integration's reference ("Redis Lock
 * Registry") shows: a Spring Data Redis {@code LettuceConnectionFactory}, {@code new
 * RedisLockRegistry(connectionFactory, registryKey, expireAfter)}, {@code
 * registry.obtain(key)}, then {@code lock.tryLock(time, unit)} and {@code lock.unlock()}. The
 * expiry is the scenario's {@code ttl_ms}; the lock type is the default (SPIN_LOCK: a Lua
 * SET PX with the registry's client id, tried again every 100 ms, the registry's
 * idleBetweenTries, until the wait runs out).
 *
 * <p>With {@code renewal = true} the registry is given a {@code TaskScheduler}
 * ({@code setRenewalTaskScheduler}, RenewableLockRegistry): every lock it grants is then
 * renewed (PEXPIRE if the value is still ours) every expireAfter / 3 until it is unlocked, a
 * watchdog in the JVM.
 *
 * <p>Spring's unlock is a Lua compare-and-UNLINK; when the key no longer holds this registry's
 * id it throws {@code ConcurrentModificationException} ("Lock was released in the store due to
 * expiration"), which is {@code fail not-owner}: the library knows it freed nothing.
 *
 * <p>With {@code colliding_lock = true} (for the known-bug catalogue, Spring Integration #11146;
 * the same option as spring-jdbc's, see JdbcRegistryAdapter) each client also holds a second,
 * coarse lock of its own for the whole run, taken at the first acquire on the thread every
 * request runs on and never given back, as a service holds a lock on its own shard while it takes
 * a shared lock per task inside it. Its name, {@code <lock>:coarse-p<process>-<n>}, is the first
 * whose local lock in 7.0.5's shared pool is the main lock's: 7.0.5's RedisLock takes its {@code
 * ReentrantLock} from the registry's {@code DefaultLockRegistry} (256 of them, {@code new
 * DefaultLockRegistry()}) by its Redis key, {@code registryKey + ':' + path}
 * (RedisLockRegistry.java lines 125, 422-428 at v7.0.5), and its unlock returns before deleting
 * the key while that lock's hold count is above one (lines 567-570). The name is found by asking
 * {@code DefaultLockRegistry.obtain} of each candidate's Redis key for the object it gives the
 * main key's: the library's own rule, called rather than copied. Nobody else wants that name; its
 * key expires after expireAfter unless renewal is on, which changes nothing: what matters is the
 * JVM's local hold. In releases whose locks each have their own {@code ReentrantLock} (7.0.2,
 * 7.0.6 on) the two names are unrelated.
 */
public final class RedisRegistryAdapter {
    /** The {@code [client] init} keys this adapter takes. */
    static final Keys KEYS = new Keys()
            .bool("renewal", false, "true: setRenewalTaskScheduler(a ThreadPoolTaskScheduler), the"
                    + " registry renews each held lock every expireAfter/3; false: the lock lives"
                    + " expireAfter (= ttl_ms) from its grant")
            .bool("colliding_lock", false, "true: each client also holds, for the whole run, a"
                    + " second lock of its own whose key falls in the main key's bucket of 7.0.5's"
                    + " shared pool (DefaultLockRegistry, 256 ReentrantLocks), taken at the first"
                    + " acquire on the same thread (Spring Integration #11146)");

    public static void main(String[] args) {
        Protocol.serve(RedisRegistryAdapter::start);
    }

    static Adapter start(Init init) throws Exception {
        Protocol.Values options = KEYS.read(init.extra);
        boolean renewal = options.bool("renewal");
        boolean colliding = options.bool("colliding_lock");
        String[] node = Protocol.hostPort(init.nodes.get(0));
        // The JDK's resolver instead of Lettuce's default Netty DNS resolver, which opens UDP
        // sockets on the wildcard address (0.0.0.0) at start though the address is a literal
        // 127.0.0.1 that needs no lookup: lockpick's processes stay on loopback. Resolving only;
        // the connection and the registry are Spring's defaults.
        ClientResources resources =
                ClientResources.builder().addressResolverGroup(DefaultAddressResolverGroup.INSTANCE).build();
        LettuceConnectionFactory connections = new LettuceConnectionFactory(
                new RedisStandaloneConfiguration(node[0], Integer.parseInt(node[1])),
                LettuceClientConfiguration.builder().clientResources(resources).build());
        // Connect at start (Spring Data Redis's eagerInitialization, off by default) rather than
        // in the first acquire: four fresh JVMs at once on a loaded 2-core machine took over 3 s
        // for that first acquire, which lockpick's deadlock check (3 s without a grant) then
        // reports. The connection is the same shared one either way.
        connections.setEagerInitialization(true);
        // What the Spring container does with the bean: InitializingBean, then SmartLifecycle.
        try {
            // afterPropertiesSet() already calls start() (early startup is on by default);
            // the second start() is what the container's lifecycle would do, and a no-op.
            connections.afterPropertiesSet();
            connections.start();
        } catch (RedisConnectionFailureException e) {
            // A replacement process can start while the nemesis cuts the link. start() marks
            // the factory STARTED before it connects (the connect is its last step), so the
            // shared connection is then made lazily at the first acquire, as with
            // eagerInitialization off, instead of the adapter dying before its hello (which
            // lockpick would report as an adapter error, not the library's verdict).
            System.err.println("eager connect failed, connecting at first use: " + e.getMessage());
        }
        // "lockpick:lock" + ":" + the lock's name: the key is lockpick:lock:<lock>, as for the
        // other Redis adapters.
        RedisLockRegistry registry =
                new RedisLockRegistry(connections, "lockpick:lock", Duration.ofMillis(init.ttlMs));
        if (renewal) {
            ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
            scheduler.setThreadNamePrefix("lock-renewal-");
            scheduler.initialize();
            registry.setRenewalTaskScheduler(scheduler);
        }
        Lock lock = registry.obtain(init.lock);
        Lock coarse = null;
        if (colliding) {
            // The pool 7.0.5's registry makes (new DefaultLockRegistry(): mask 0xFF), asked for
            // each lock's Redis key as 7.0.5's RedisLock asks it (registryKey + ':' + path).
            DefaultLockRegistry buckets = new DefaultLockRegistry();
            String coarsePath = CollidingLock.collidingKey(init.lock, init.lock + ":coarse-p" + init.process + "-",
                    k -> buckets.obtain("lockpick:lock:" + k));
            coarse = registry.obtain(coarsePath);
            System.err.println("spring-redis: colliding_lock: holding lockpick:lock:" + coarsePath
                    + " for the whole run, in the bucket of lockpick:lock:" + init.lock
                    + "; in this release the two locks have " + CollidingLock.sharesLocalLock(lock, coarse, "localLock"));
        }
        Lock coarseLock = coarse;
        boolean[] coarseHeld = {false};

        String name = "java-spring-redis-lock-registry" + (renewal ? "-renewal" : "")
                + (colliding ? "-colliding-lock" : "");
        return new Adapter(name, RedisLockRegistry.class)
                .op("acquire", request -> {
                    if (coarseLock != null && !coarseHeld[0]) {
                        // On this thread, the one every request runs on; never unlocked.
                        if (!coarseLock.tryLock(init.acquireTimeoutMs, TimeUnit.MILLISECONDS)) {
                            throw new IllegalStateException("colliding_lock: the coarse lock was not granted");
                        }
                        coarseHeld[0] = true;
                        System.err.println("spring-redis: colliding_lock: coarse lock held");
                    }
                    return RegistryLock.acquire(lock, init.acquireTimeoutMs);
                })
                // Another client's id under the key (ConcurrentModificationException), or "You
                // do not own lock": this thread holds nothing (IllegalStateException).
                .op("release", request -> RegistryLock.release(lock, "spring-redis",
                        e -> e instanceof ConcurrentModificationException || e instanceof IllegalStateException));
    }

}
