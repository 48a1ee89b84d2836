package lockpick.spring;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import javax.sql.DataSource;
import lockpick.Protocol;
import lockpick.Protocol.Adapter;
import lockpick.Protocol.Init;
import lockpick.Protocol.Keys;
import org.springframework.core.io.ClassPathResource;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.util.UUIDConverter;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;

/**
 * lockpick adapter for Spring Integration's {@code JdbcLockRegistry} with its {@code
 * DefaultLockRepository} on PostgreSQL (the first node, through its proxy), used as the
 * reference ("JDBC Lock Registry") shows: the {@code INT_LOCK} table from the schema script
 * Spring Integration ships for PostgreSQL ({@code
 * org/springframework/integration/jdbc/schema-postgresql.sql}, run before the first acquire
 * as Spring Boot's {@code spring.integration.jdbc.initialize-schema} would at start), {@code new
 * DefaultLockRepository(dataSource)} with a transaction manager, {@code new
 * JdbcLockRegistry(repository, expireAfter)}, {@code obtain(key)}, {@code tryLock(time, unit)}
 * and {@code unlock()}. The expiry is the scenario's {@code ttl_ms}.
 *
 * <p>DefaultLockRepository takes a lock by {@code UPDATE INT_LOCK SET CLIENT_ID = ?,
 * EXPIRED_AFTER = ? WHERE ... AND (CLIENT_ID = ? OR EXPIRED_AFTER < ?)} or else an INSERT, in a
 * READ COMMITTED transaction, every time read from this client's clock ({@code
 * LocalDateTime.now(UTC)}); JdbcLockRegistry tries every 100 ms (idleBetweenTries) until the
 * wait runs out. Nothing renews a lock by itself (renewLock by hand only). Its unlock deletes
 * the row WHERE CLIENT_ID is ours and throws {@code ConcurrentModificationException} when no
 * row matched: {@code fail not-owner}.
 *
 * <p>One init option, {@code colliding_lock} (for the known-bug catalogue, Spring Integration
 * #11146): each client also holds a second, coarse lock of its own for the whole run, and takes
 * and gives back the scenario's lock inside it, on the same thread, as a service does that
 * holds a lock on its own shard or job for as long as it works and takes a shared lock per
 * task inside it. The coarse lock's name, {@code <main key>:coarse-p<process>-<n>}, is the first
 * whose local lock in 7.0.5's shared pool is the main key's: 7.0.5's JdbcLockRegistry gives each
 * JdbcLock the {@code ReentrantLock} that its {@code DefaultLockRegistry} (256 of them, {@code
 * new DefaultLockRegistry()}) hands out for the lock's path, {@code
 * UUIDConverter.getUUID(key).toString()} (JdbcLockRegistry.java lines 102, 161-162 and 215 at
 * v7.0.5), and its unlock returns before deleting the row while that {@code ReentrantLock}'s hold
 * count is above one (lines 343-346). The name is found by asking those two classes, {@code
 * DefaultLockRegistry.obtain} of each candidate's UUID, for the same object as the main key's:
 * the library's own rule, called rather than copied. Each process's name is its own, so no other
 * client ever wants it; its row expires after expireAfter (nothing renews it), which changes
 * nothing, since what matters is the JVM's local hold. The coarse lock is taken at the first
 * acquire, after the schema (the table must exist), and never given back. In releases whose
 * locks each have their own {@code ReentrantLock} (7.0.2, 7.0.6 on) the two names are unrelated.
 */
public final class JdbcRegistryAdapter {
    static final Keys KEYS = new Keys()
            .bool("colliding_lock", false, "true: each client also holds, for the whole run, a"
                    + " second lock of its own whose key falls in the main key's bucket of 7.0.5's"
                    + " shared pool (DefaultLockRegistry, 256 ReentrantLocks), taken at the first"
                    + " acquire on the same thread (Spring Integration #11146)");

    // lockpick's PostgreSQL nodes: initdb's superuser, no password over loopback, the default
    // database (harness/src/backends/postgres/process/mod.rs, USER and DATABASE).
    private static final String USER = "lockpick";
    private static final String DATABASE = "postgres";

    public static void main(String[] args) {
        Protocol.serve(JdbcRegistryAdapter::start);
    }

    static Adapter start(Init init) throws Exception {
        boolean colliding = KEYS.read(init.extra).bool("colliding_lock");
        String[] node = Protocol.hostPort(init.nodes.get(0));
        HikariConfig pool = new HikariConfig();
        pool.setJdbcUrl("jdbc:postgresql://" + node[0] + ":" + node[1] + "/" + DATABASE);
        pool.setUsername(USER);
        pool.setMaximumPoolSize(2);
        // Start without a connection: a process that replaces a retired one may start while
        // the server is cut off, and its first request, not its hello, should meet that.
        pool.setInitializationFailTimeout(-1);
        HikariDataSource dataSource = new HikariDataSource(pool);

        DefaultLockRepository repository = new DefaultLockRepository(dataSource);
        repository.setTransactionManager(new DataSourceTransactionManager(dataSource));
        // What the Spring container does with the bean: InitializingBean and
        // SmartInitializingSingleton here; SmartLifecycle's start (which checks the table) at
        // the first acquire, after the schema, since both need the server.
        repository.afterPropertiesSet();
        repository.afterSingletonsInstantiated();
        JdbcLockRegistry registry = new JdbcLockRegistry(repository, Duration.ofMillis(init.ttlMs));
        String key = "lockpick:lock:" + init.lock;
        Lock lock = registry.obtain(key);
        Lock coarse = null;
        if (colliding) {
            // The pool 7.0.5's registry makes (new DefaultLockRegistry(): mask 0xFF) and the
            // path it gives each lock (pathFor: UUIDConverter.getUUID(key).toString()).
            DefaultLockRegistry buckets = new DefaultLockRegistry();
            String coarseKey = CollidingLock.collidingKey(key, key + ":coarse-p" + init.process + "-",
                    k -> buckets.obtain(UUIDConverter.getUUID(k).toString()));
            coarse = registry.obtain(coarseKey);
            System.err.println("spring-jdbc: colliding_lock: holding " + coarseKey + " (path "
                    + UUIDConverter.getUUID(coarseKey) + ") for the whole run, in the bucket of " + key
                    + " (path " + UUIDConverter.getUUID(key) + "); in this release the two locks have "
                    + CollidingLock.sharesLocalLock(lock, coarse, "delegate"));
        }
        Lock coarseLock = coarse;
        boolean[] started = {false};
        boolean[] coarseHeld = {false};

        String name = "java-spring-jdbc-lock-registry-postgres" + (colliding ? "-colliding-lock" : "");
        return new Adapter(name, JdbcLockRegistry.class)
                .op("acquire", request -> {
                    if (!started[0]) {
                        createSchema(dataSource);
                        repository.start();
                        started[0] = true;
                    }
                    if (coarseLock != null && !coarseHeld[0]) {
                        // On this thread, the one every request runs on; never unlocked.
                        if (!coarseLock.tryLock(init.acquireTimeoutMs, TimeUnit.MILLISECONDS)) {
                            throw new IllegalStateException("colliding_lock: the coarse lock was not granted");
                        }
                        coarseHeld[0] = true;
                        System.err.println("spring-jdbc: colliding_lock: coarse lock held");
                    }
                    return RegistryLock.acquire(lock, init.acquireTimeoutMs);
                })
                // No row of ours to delete (another client's UPDATE took the expired row:
                // ConcurrentModificationException), or this thread holds nothing.
                .op("release", request -> RegistryLock.release(lock, "spring-jdbc",
                        e -> e instanceof ConcurrentModificationException || e instanceof IllegalMonitorStateException));
    }

    /**
     * Spring Integration's own DDL, from its jar. The clients start together and each runs it:
     * CREATE TABLE of a table another client created fails, and Spring's populator goes on
     * (continueOnError), as a schema initializer over a shared database must.
     */
    private static void createSchema(DataSource dataSource) {
        ResourceDatabasePopulator schema = new ResourceDatabasePopulator(
                new ClassPathResource("org/springframework/integration/jdbc/schema-postgresql.sql"));
        schema.setContinueOnError(true);
        schema.execute(dataSource);
    }
}
