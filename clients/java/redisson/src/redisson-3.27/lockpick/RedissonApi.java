package lockpick;

import java.util.concurrent.CompletionException;
import org.redisson.api.RLock;

/**
 * The Redisson behaviour that differs between the releases RedissonAdapter is built against, for
 * the releases pinned around the MultiLock unlock change of 3.27.2 (pinned-releases:
 * {@code -Dredisson.api=3.27}, both 3.27.1 and 3.27.2, so the pair differs only in the library);
 * src/redisson-3.52 has the same class for the pom's default.
 */
final class RedissonApi {
    private RedissonApi() {}

    /**
     * {@code lock.unlock()}, with the exception the adapter answers by. Up to 3.27.1,
     * {@code RedissonMultiLock.unlock()} sent {@code unlockAsync()} to every sub-lock and then
     * {@code join()}ed each future in turn, so a sub-lock no longer ours surfaces as a
     * {@code CompletionException} whose cause is the {@code IllegalMonitorStateException} that
     * {@code RLock.unlock()} throws as is (and that 3.27.2's {@code locks.forEach(Lock::unlock)}
     * throws): that cause is rethrown, anything else unchanged. A no-op from 3.27.2 on.
     */
    static void unlock(RLock lock) {
        try {
            lock.unlock();
        } catch (CompletionException e) {
            if (e.getCause() instanceof IllegalMonitorStateException cause) {
                throw cause;
            }
            throw e;
        }
    }
}
