package lockpick;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import lockpick.Protocol.Adapter;
import lockpick.Protocol.BadInit;
import lockpick.Protocol.Init;
import lockpick.Protocol.Keys;
import lockpick.Protocol.Reply;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * lockpick adapter for ShedLock 4.9.x's JDBC provider on PostgreSQL, for the known-bug
 * catalogue (scenarios/known-bugs/): the same use of the library as clients/java's
 * ShedLockAdapter (the {@code shedlock} table from ShedLock's DDL, a {@code
 * JdbcTemplateLockProvider} over a {@code JdbcTemplate} on a HikariCP pool, {@code lockAtMostFor}
 * = {@code ttl_ms}, {@code lockAtLeastFor} zero, retried every {@code retry_delay_ms} until
 * {@code acquire_timeout_ms}), with the 4.9 API: {@code new LockConfiguration(name,
 * lockAtMostFor, lockAtLeastFor)}, whose creation time is ShedLock's own {@code
 * ClockProvider.now()}. Which 4.9.x it runs is the build it is launched from (4.9.2/ or 4.9.3/
 * beside this project's pom.xml), and the hello says so, read from the jar.
 *
 * <p>Two init options set up what the catalogue's reports need, each as an application could
 * be: {@code other_lock} makes a second lock's row exist, expired, as in any service with two
 * scheduled tasks (ShedLock PR #244); {@code clock_ahead_ms} runs one client's clock ahead
 * through ShedLock's own hook, {@code ClockProvider.setClock} (the clock it reads for {@code
 * :now} and {@code lock_until}), as on a host whose clock is wrong (ShedLock issue #231).
 */
public final class ShedLock49Adapter {
    /** The boolean {@code [client] init} keys; the integer ones are read by {@link #integer}. */
    static final Keys KEYS = new Keys()
            .bool("db_time", false, "true: usingDbTime(), lock_until computed by the database's"
                    + " clock; false: by this client's clock")
            .bool("other_lock", false, "true: before its first acquire, each client locks and"
                    + " unlocks a second lock name once, so that its row exists and is expired");

    /** Integer init keys, which Protocol.Keys (booleans only) does not read. */
    static final String CLOCK_AHEAD_MS = "clock_ahead_ms";
    static final String CLOCK_AHEAD_CLIENT = "clock_ahead_client";

    // lockpick's PostgreSQL nodes: initdb's superuser, no password over loopback.
    private static final String USER = "lockpick";
    private static final String DATABASE = "postgres";

    // ShedLock's README: "CREATE TABLE shedlock(...)" for PostgreSQL.
    private static final String DDL = "CREATE TABLE IF NOT EXISTS shedlock(name VARCHAR(64) NOT NULL,"
            + " lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL,"
            + " locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))";

    public static void main(String[] args) {
        Protocol.serve(ShedLock49Adapter::start);
    }

    static Adapter start(Init init) throws Exception {
        ObjectNode booleans = init.extra.deepCopy();
        long aheadMs = integer(booleans, CLOCK_AHEAD_MS, 0);
        long aheadClient = integer(booleans, CLOCK_AHEAD_CLIENT, 1);
        Protocol.Values values = KEYS.read(booleans);
        boolean dbTime = values.bool("db_time");
        boolean otherLock = values.bool("other_lock");
        if (aheadMs != 0 && init.client == aheadClient) {
            // This client's host clock is wrong by aheadMs: every time ShedLock reads (the
            // LockConfiguration's creation time, :now in its statements) comes from here.
            ClockProvider.setClock(Clock.offset(Clock.systemUTC(), Duration.ofMillis(aheadMs)));
            System.err.println("shedlock: this client's clock runs " + aheadMs + " ms ahead (ClockProvider.setClock)");
        }
        String[] node = Protocol.hostPort(init.nodes.get(0));
        // A pool, as a Spring Boot DataSource is; started without a connection, as
        // clients/java's adapter does.
        HikariConfig pool = new HikariConfig();
        pool.setJdbcUrl("jdbc:postgresql://" + node[0] + ":" + node[1] + "/" + DATABASE);
        pool.setUsername(USER);
        pool.setMaximumPoolSize(2);
        pool.setInitializationFailTimeout(-1);
        DataSource dataSource = new HikariDataSource(pool);
        boolean[] ready = {false};

        // One locked_by per client, as clients/java's adapter does: each stands for a service
        // instance on a host of its own.
        JdbcTemplateLockProvider.Configuration.Builder config = JdbcTemplateLockProvider.Configuration.builder()
                .withJdbcTemplate(new JdbcTemplate(dataSource))
                .withLockedByValue("lockpick-process-" + init.process);
        if (dbTime) {
            config.usingDbTime();
        }
        JdbcTemplateLockProvider provider = new JdbcTemplateLockProvider(config.build());
        String name = "lockpick:lock:" + init.lock;
        Duration atMost = Duration.ofMillis(init.ttlMs);
        Random random = new Random(init.seed);
        SimpleLock[] held = {null};

        return new Adapter("java-shedlock-jdbc-postgres-4.9" + (dbTime ? "-db-time" : ""), JdbcTemplateLockProvider.class)
                .op("acquire", request -> {
                    if (!ready[0]) {
                        createTable(dataSource);
                        if (otherLock) {
                            // Another scheduled task's lock, run once and done: its row stays,
                            // expired (the unlock sets lock_until to its now).
                            provider.lock(new LockConfiguration(name + ":other", Duration.ofMillis(1), Duration.ZERO))
                                    .ifPresent(SimpleLock::unlock);
                        }
                        ready[0] = true;
                    }
                    long started = System.nanoTime();
                    long deadline = started + TimeUnit.MILLISECONDS.toNanos(init.acquireTimeoutMs);
                    while (true) {
                        Optional<SimpleLock> lock = provider.lock(new LockConfiguration(name, atMost, Duration.ZERO));
                        if (lock.isPresent()) {
                            held[0] = lock.get();
                            // ShedLock's SimpleLock does not say how long it is valid: no lease,
                            // as clients/java's ShedLockAdapter reports (a lease computed here
                            // would be the adapter's arithmetic, not the library's claim).
                            return Reply.ok(null, null, null);
                        }
                        // Empty: ShedLock's insert or update matched no row.
                        if (System.nanoTime() >= deadline) {
                            return Reply.fail("timeout-waiting");
                        }
                        long span = init.retryDelayMaxMs - init.retryDelayMinMs;
                        Thread.sleep(init.retryDelayMinMs + (span > 0 ? random.nextInt((int) span + 1) : 0));
                    }
                })
                .op("release", request -> {
                    SimpleLock lock = held[0];
                    held[0] = null;
                    if (lock == null) {
                        return Reply.fail("not-owner");
                    }
                    // Unlock sets lock_until = now WHERE name and locked_by match, and does not
                    // say whether a row matched.
                    lock.unlock();
                    return Reply.ok();
                });
    }

    /** Removes integer init key {@code key} from {@code extra}: its value, or {@code dflt}. */
    static long integer(ObjectNode extra, String key, long dflt) throws BadInit {
        JsonNode value = extra.remove(key);
        if (value == null) {
            return dflt;
        }
        if (!value.isIntegralNumber() || !value.canConvertToLong()) {
            throw new BadInit("init key \"" + key + "\" must be an integer, not " + value);
        }
        return value.longValue();
    }

    /** ShedLock's DDL, once more if a concurrent CREATE TABLE IF NOT EXISTS lost the race. */
    private static void createTable(DataSource dataSource) throws SQLException {
        for (int attempt = 1; ; attempt++) {
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute(DDL);
                return;
            } catch (SQLException e) {
                if (attempt == 2) {
                    throw e;
                }
                System.err.println("shedlock: creating the table: " + e.getMessage() + "; once more");
            }
        }
    }
}
