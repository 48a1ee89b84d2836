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
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * lockpick adapter for ShedLock's JDBC provider on PostgreSQL or on MariaDB ({@link
 * ShedLockMariaDbAdapter}) (the first node, through its proxy), used as ShedLock's README
 * shows: the {@code shedlock} table from its DDL for that database, a {@code
 * JdbcTemplateLockProvider} over a {@code JdbcTemplate} on a pooled DataSource, and {@code
 * lockProvider.lock(new LockConfiguration(now, name, lockAtMostFor, lockAtLeastFor))}, whose
 * {@code SimpleLock} is unlocked after the work. {@code lockAtMostFor} is the scenario's {@code
 * ttl_ms}; {@code lockAtLeastFor} is zero.
 *
 * <p>ShedLock does not wait for a lock: {@code lock()} answers at once, empty when another
 * holds it (it is made for scheduled tasks that skip a run). The adapter tries again after
 * {@code retry_delay_ms} until {@code acquire_timeout_ms}, as a caller that wants the lock must.
 *
 * <p>One source for every ShedLock release it is built against: the pom's version, and the
 * releases pinned in ../pinned-releases for the known-bug catalogue (scenarios/known-bugs/),
 * whose hello reports the version it runs, read from the jar. The one API that differs, how a
 * {@code LockConfiguration} is made, is {@link ShedLockApi}, a version shim (src/shedlock-7,
 * src/shedlock-4.9, chosen by the pom's {@code shedlock.api}).
 *
 * <p>Two init options set up what the catalogue's reports need, each as an application could
 * be: {@code other_lock} makes a second lock's row exist, expired, as in any service with two
 * scheduled tasks (ShedLock PR #244); {@code clock_ahead_ms} runs one client's clock ahead
 * through ShedLock's own hook, {@code ClockProvider.setClock} (the clock it reads for {@code
 * :now} and {@code lock_until}), as on a host whose clock is wrong (ShedLock issue #231).
 */
public final class ShedLockAdapter {
    /** The boolean {@code [client] init} keys; the integer ones are read by {@link #integer}. */
    static final Keys KEYS = new Keys()
            .bool("db_time", false, "true: usingDbTime(), lock_until computed by the database's"
                    + " clock; false: by this client's clock")
            .bool("other_lock", false, "true: before its first acquire, each client locks and"
                    + " unlocks a second lock name once, so that its row exists and is expired");

    /** Integer init keys, which Protocol.Keys (booleans only) does not read. */
    static final String CLOCK_AHEAD_MS = "clock_ahead_ms";
    static final String CLOCK_AHEAD_CLIENT = "clock_ahead_client";

    /** The databases this adapter knows: how to reach lockpick's nodes, and ShedLock's DDL. */
    enum Database {
        // lockpick's PostgreSQL nodes: initdb's superuser, no password over loopback, the
        // default database (harness/src/backends/postgres/process/mod.rs, USER and DATABASE).
        // ShedLock's README: "CREATE TABLE shedlock(...)" for PostgreSQL.
        POSTGRES("postgres", "jdbc:postgresql://%s:%s/postgres", "lockpick",
                "CREATE TABLE IF NOT EXISTS shedlock(name VARCHAR(64) NOT NULL,"
                        + " lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL,"
                        + " locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))"),
        // lockpick's MariaDB nodes: root, no password over loopback
        // (harness/src/backends/mariadb/node.rs); the database `lockpick`, which the driver
        // creates if this is the first client. ShedLock's README, for MySQL and MariaDB.
        MARIADB("mariadb", "jdbc:mariadb://%s:%s/lockpick?createDatabaseIfNotExist=true", "root",
                "CREATE TABLE IF NOT EXISTS shedlock(name VARCHAR(64) NOT NULL,"
                        + " lock_until TIMESTAMP(3) NOT NULL,"
                        + " locked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),"
                        + " locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))");

        final String label;
        final String url;
        final String user;
        final String ddl;

        Database(String label, String url, String user, String ddl) {
            this.label = label;
            this.url = url;
            this.user = user;
            this.ddl = ddl;
        }
    }

    public static void main(String[] args) {
        Protocol.serve(init -> start(init, Database.POSTGRES));
    }

    static Adapter start(Init init, Database database) throws Exception {
        ObjectNode booleans = init.extra.deepCopy();
        long aheadMs = integer(booleans, CLOCK_AHEAD_MS, 0);
        long aheadClient = integer(booleans, CLOCK_AHEAD_CLIENT, 1);
        Protocol.Values values = KEYS.read(booleans);
        boolean dbTime = values.bool("db_time");
        boolean otherLock = values.bool("other_lock");
        // The client's clock, which the LockConfiguration's creation time is read from.
        Clock clock = Clock.systemUTC();
        if (aheadMs != 0 && init.client == aheadClient) {
            // This client's host clock is wrong by aheadMs: every time ShedLock reads (the
            // LockConfiguration's creation time, :now in its statements) comes from here.
            clock = Clock.offset(clock, Duration.ofMillis(aheadMs));
            ClockProvider.setClock(clock);
            System.err.println("shedlock: this client's clock runs " + aheadMs + " ms ahead (ClockProvider.setClock)");
        }
        Clock clientClock = clock;
        String[] node = Protocol.hostPort(init.nodes.get(0));
        // A pool, as a Spring Boot DataSource is (HikariCP); two connections, since this client
        // makes one request at a time.
        HikariConfig pool = new HikariConfig();
        pool.setJdbcUrl(String.format(database.url, node[0], node[1]));
        pool.setUsername(database.user);
        pool.setMaximumPoolSize(2);
        // Start without a connection: a process that replaces a retired one may start while
        // the server is cut off, and its first request, not its hello, should meet that.
        pool.setInitializationFailTimeout(-1);
        DataSource dataSource = new HikariDataSource(pool);
        boolean[] ready = {false};

        // ShedLock names a holder by its host name (locked_by), and its unlock matches on the
        // name and locked_by only. lockpick's clients share one host; each stands for a service
        // instance on a host of its own, so each gets its own locked_by.
        JdbcTemplateLockProvider.Configuration.Builder config = JdbcTemplateLockProvider.Configuration.builder()
                .withJdbcTemplate(new JdbcTemplate(dataSource))
                .withLockedByValue("lockpick-process-" + init.process);
        if (dbTime) {
            config.usingDbTime();
        }
        JdbcTemplateLockProvider provider = new JdbcTemplateLockProvider(config.build());
        String lockName = "lockpick:lock:" + init.lock;
        Duration atMost = Duration.ofMillis(init.ttlMs);
        Random random = new Random(init.seed);
        SimpleLock[] held = {null};

        String name = "java-shedlock-jdbc-" + database.label + (dbTime ? "-db-time" : "");
        return new Adapter(name, JdbcTemplateLockProvider.class)
                .op("acquire", request -> {
                    if (!ready[0]) {
                        createTable(dataSource, database.ddl);
                        if (otherLock) {
                            // Another scheduled task's lock, run once and done: its row stays,
                            // expired (the unlock sets lock_until to its now).
                            provider.lock(ShedLockApi.configuration(clientClock, lockName + ":other",
                                            Duration.ofMillis(1), Duration.ZERO))
                                    .ifPresent(SimpleLock::unlock);
                        }
                        ready[0] = true;
                    }
                    long started = System.nanoTime();
                    long deadline = started + TimeUnit.MILLISECONDS.toNanos(init.acquireTimeoutMs);
                    while (true) {
                        Optional<SimpleLock> lock =
                                provider.lock(ShedLockApi.configuration(clientClock, lockName, atMost, Duration.ZERO));
                        if (lock.isPresent()) {
                            held[0] = lock.get();
                            // ShedLock's SimpleLock does not say how long it is valid: no lease.
                            return Reply.ok(null, null, null);
                        }
                        // Empty: the row says another holds it until lock_until; nothing was
                        // written (ShedLock's insert or update matched no row).
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
                    // ShedLock's unlock sets lock_until = now WHERE name and locked_by match; it
                    // does not say whether a row matched, so a lost lock unlocks "fine".
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

    /**
     * ShedLock's DDL. Four clients start at once, and PostgreSQL's CREATE TABLE IF NOT EXISTS
     * can fail for the one that loses the race on its catalog (duplicate type or key): then the
     * table exists, which a second try sees.
     */
    private static void createTable(DataSource dataSource, String ddl) throws SQLException {
        for (int attempt = 1; ; attempt++) {
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute(ddl);
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
