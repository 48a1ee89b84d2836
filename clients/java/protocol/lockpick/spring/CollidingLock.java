package lockpick.spring;

import java.lang.reflect.Field;
import java.util.function.Function;

/**
 * The Spring Integration adapters' {@code colliding_lock} option (Spring Integration #11146):
 * a coarse lock in the main key's bucket of the registry's shared pool of local locks, and what
 * the release in use makes of it. Plain Java, so every adapter can compile it.
 */
public final class CollidingLock {
    private CollidingLock() {}

    /**
     * The first name {@code <prefix>0}, {@code <prefix>1}, ... whose local lock by {@code
     * bucketOf} (the library's {@code DefaultLockRegistry.obtain}) is the very object the main
     * key's is (in the runs here the 159th to the 7,081st name); it gives up after 100,000.
     */
    public static String collidingKey(String key, String prefix, Function<String, Object> bucketOf) {
        Object bucket = bucketOf.apply(key);
        for (int n = 0; n < 100_000; n++) {
            if (bucketOf.apply(prefix + n) == bucket) {
                return prefix + n;
            }
        }
        throw new IllegalStateException("no name " + prefix + "<n> in the bucket of " + key);
    }

    /**
     * For stderr only, never a reply: whether the two locks share one ReentrantLock (the private
     * field {@code field} of their class or a superclass: 7.0.5's taken from the shared pool, a
     * lock's own from 7.0.6).
     */
    public static String sharesLocalLock(Object a, Object b, String field) {
        try {
            for (Class<?> c = a.getClass(); c != null; c = c.getSuperclass()) {
                try {
                    Field f = c.getDeclaredField(field);
                    f.setAccessible(true);
                    return f.get(a) == f.get(b) ? "one ReentrantLock for both" : "a ReentrantLock each";
                } catch (NoSuchFieldException e) {
                    // a superclass's, then
                }
            }
            return "an unknown local lock (no field " + field + ")";
        } catch (ReflectiveOperationException | RuntimeException e) {
            return "an unknown local lock (" + e + ")";
        }
    }
}
