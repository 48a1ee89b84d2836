package lockpick;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import net.javacrumbs.shedlock.core.LockConfiguration;

/**
 * The ShedLock API that differs between the releases ShedLockAdapter is built against, as
 * ShedLock 5 and later have it (the pom's default, {@code shedlock.api} 7); src/shedlock-4.9 has
 * the same class for the 4.x line.
 */
final class ShedLockApi {
    private ShedLockApi() {}

    /**
     * {@code new LockConfiguration(createdAt, name, lockAtMostFor, lockAtLeastFor)}: from 5.0 on
     * the caller passes the creation time, read here from the client's clock (the system clock,
     * or one run ahead by clock_ahead_ms).
     */
    static LockConfiguration configuration(Clock clock, String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(Instant.now(clock), name, atMost, atLeast);
    }
}
