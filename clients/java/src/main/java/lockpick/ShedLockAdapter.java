package lockpick;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import lockpick.Protocol.Adapter;
import lockpick.Protocol.Init;
import lockpick.Protocol.Keys;
import lockpick.Protocol.Reply;
import net.javacrumbs.shedlock.core.LockConfiguration;
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
 */
public final class ShedLockAdapter {
    /** The {@code [client] init} keys this adapter takes. */
    static final Keys KEYS = new Keys()
            .bool("db_time", false, "true: usingDbTime(), lock_until computed by the database's"
                    + " clock; false: by this client's clock");

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
        boolean dbTime = KEYS.read(init.extra).bool("db_time");
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
        boolean[] tableMade = {false};

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
                    if (!tableMade[0]) {
                        createTable(dataSource, database.ddl);
                        tableMade[0] = true;
                    }
                    long started = System.nanoTime();
                    long deadline = started + TimeUnit.MILLISECONDS.toNanos(init.acquireTimeoutMs);
                    while (true) {
                        Optional<SimpleLock> lock =
                                provider.lock(new LockConfiguration(Instant.now(), lockName, atMost, Duration.ZERO));
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
