package lockpick;

/**
 * lockpick adapter for ShedLock's JDBC provider on MariaDB: {@link ShedLockAdapter}, with
 * MariaDB's driver and ShedLock's MySQL/MariaDB DDL. With {@code db_time = true}
 * ({@code usingDbTime()}) ShedLock computes and compares lock_until with the server's
 * {@code UTC_TIMESTAMP(3)}; without it, with this client's clock.
 */
public final class ShedLockMariaDbAdapter {
    private ShedLockMariaDbAdapter() {}

    public static void main(String[] args) {
        Protocol.serve(init -> ShedLockAdapter.start(init, ShedLockAdapter.Database.MARIADB));
    }
}
