package lockpick.spring;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.function.Predicate;
import lockpick.Protocol.Reply;

/**
 * The protocol's acquire and release on a lock a Spring Integration registry handed out
 * ({@code registry.obtain(key)}), as every registry adapter answers them. What a registry
 * throws when the lock is no longer this holder's differs (another client's id in Redis, no row
 * of ours in the table, Curator's books), so each adapter says which exceptions mean that.
 *
 * <p>Beside the protocol helper rather than in a library's folder: the three registries are
 * three libraries (spring-redis, spring-jdbc, spring-zookeeper, each its own folder and
 * classpath) that share it, and it needs nothing but the JDK's {@code Lock}. Every library's
 * jar compiles it; only the Spring adapters load it.
 */
final class RegistryLock {
    private RegistryLock() {}

    /** {@code tryLock} within the acquire timeout. */
    static Reply acquire(Lock lock, long timeoutMs) throws InterruptedException {
        if (!lock.tryLock(timeoutMs, TimeUnit.MILLISECONDS)) {
            return Reply.fail("timeout-waiting");
        }
        // Spring's Lock says nothing of how long it is good for (the registry's expiry or the
        // session timeout is a setting, not a claim about this grant): no lease reported.
        return Reply.ok(null, null, null);
    }

    /**
     * {@code unlock}: ok, or {@code not-owner} when it throws what {@code notOwner} accepts
     * (logged on stderr with {@code tag}); anything else it throws is unknown (info).
     */
    static Reply release(Lock lock, String tag, Predicate<RuntimeException> notOwner) {
        try {
            lock.unlock();
            return Reply.ok();
        } catch (RuntimeException e) {
            if (!notOwner.test(e)) {
                throw e;
            }
            System.err.println(tag + ": unlock: " + e.getMessage());
            return Reply.fail("not-owner");
        }
    }
}
