package lockpick;

import java.time.Clock;
import java.time.Duration;
import net.javacrumbs.shedlock.core.LockConfiguration;

/**
 * The ShedLock API that differs between the releases ShedLockAdapter is built against, as the
 * 4.x line has it (pinned-releases: {@code -Dshedlock.api=4.9}); src/shedlock-7 has the same
 * class for ShedLock 5 and later.
 */
final class ShedLockApi {
    private ShedLockApi() {}

    /**
     * {@code new LockConfiguration(name, lockAtMostFor, lockAtLeastFor)}: 4.x reads the
     * creation time itself, from {@code ClockProvider.now()} (the adapter sets that clock when
     * the client's runs ahead, so {@code clock} is not needed here).
     */
    static LockConfiguration configuration(Clock clock, String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(name, atMost, atLeast);
    }
}
