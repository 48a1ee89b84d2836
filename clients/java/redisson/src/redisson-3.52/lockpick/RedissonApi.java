package lockpick;

import org.redisson.api.RLock;

/**
 * The Redisson behaviour that differs between the releases RedissonAdapter is built against, as
 * 3.27.2 and later have it (the pom's default, {@code redisson.api} 3.52); src/redisson-3.27 has
 * the same class for the releases pinned in pinned-releases (3.27.1 and 3.27.2).
 */
final class RedissonApi {
    private RedissonApi() {}

    /**
     * {@code lock.unlock()}, as it is: an unlock that finds a (sub-)lock no longer ours throws
     * {@code IllegalMonitorStateException} ({@code RedissonBaseLock.unlock()} unwraps it, and
     * {@code RedissonMultiLock.unlock()} is {@code locks.forEach(Lock::unlock)}).
     */
    static void unlock(RLock lock) {
        lock.unlock();
    }
}
