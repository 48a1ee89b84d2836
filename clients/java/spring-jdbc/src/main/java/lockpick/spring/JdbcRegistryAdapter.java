package lockpick.spring;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.locks.Lock;
import javax.sql.DataSource;
import lockpick.Protocol;
import lockpick.Protocol.Adapter;
import lockpick.Protocol.Init;
import lockpick.Protocol.Keys;
import org.springframework.core.io.ClassPathResource;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
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
 * wait runs out. Nothing renews a lock by itself (renewLock by hand only), so this adapter
 * takes no init options. Its unlock deletes the row WHERE CLIENT_ID is ours and throws {@code
 * ConcurrentModificationException} when no row matched: {@code fail not-owner}.
 */
public final class JdbcRegistryAdapter {
    static final Keys KEYS = new Keys();

    // lockpick's PostgreSQL nodes: initdb's superuser, no password over loopback, the default
    // database (harness/src/backends/postgres/process/mod.rs, USER and DATABASE).
    private static final String USER = "lockpick";
    private static final String DATABASE = "postgres";

    public static void main(String[] args) {
        Protocol.serve(JdbcRegistryAdapter::start);
    }

    static Adapter start(Init init) throws Exception {
        KEYS.read(init.extra);
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
        Lock lock = registry.obtain("lockpick:lock:" + init.lock);
        boolean[] started = {false};

        return new Adapter("java-spring-jdbc-lock-registry-postgres", JdbcLockRegistry.class)
                .op("acquire", request -> {
                    if (!started[0]) {
                        createSchema(dataSource);
                        repository.start();
                        started[0] = true;
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
