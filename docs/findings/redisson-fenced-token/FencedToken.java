// Redisson RFencedLock: the fencing token counter lives in the same Redis as the lock, so a
// redis-server restarted without persistence counts from 1 again.
//
// One redis-server (repro.sh starts it). A fenced resource (an object here, as the storage
// service guarded by the lock would be) keeps the highest token it accepted and refuses a lower
// one, as Redisson's docs ask ("Token should be checked if it's greater or equal with the
// previous one by the service guarded by this lock and reject operation if condition is false").
//
//   1. Client A takes and releases the lock three times (tokens 1, 2, 3), writing each time,
//      then takes it a fourth time (token 4), writes, and keeps holding it (watchdog).
//   2. The redis-server is killed (SIGKILL) and restarted: without persistence (the default),
//      or with appendonly yes + appendfsync always (repro.sh aof-always, the control).
//   3. Client B (another RedissonClient) takes the lock (1 s wait), writes, releases, until the
//      resource accepts its write or 6 grants; A writes again with its token 4 in between.
//
// Without persistence B's first grant carries token 1: the fence refuses the lock's current
// holder and accepts the stale one. Exit 1: BUG REPRODUCED; exit 0: not reproduced.
// Usage: java -cp 'lib/*' FencedToken.java PORT (REPRO_SH and REPRO_TMP set, as repro.sh does).

import org.redisson.Redisson;
import org.redisson.api.RFencedLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.util.concurrent.TimeUnit;

public class FencedToken {
    static final long T0 = System.nanoTime();

    static void say(String fmt, Object... args) {
        System.out.printf("[%6.3f s] %s%n", (System.nanoTime() - T0) / 1e9, String.format(fmt, args));
    }

    /** The service guarded by the lock: accepts a token at least the highest it accepted. */
    static final class FencedResource {
        long highest = 0;

        boolean write(String who, long token) {
            boolean ok = token >= highest;
            if (ok) highest = token;
            say("  resource: write by %s with token %d -> %s (highest accepted: %d)",
                    who, token, ok ? "ACCEPTED" : "REFUSED", highest);
            return ok;
        }
    }

    static RedissonClient client(int port) {
        Config config = new Config(); // lockWatchdogTimeout: the default, 30 s
        config.useSingleServer()
                .setAddress("redis://127.0.0.1:" + port)
                .setConnectionMinimumIdleSize(1)
                .setConnectionPoolSize(2)
                .setSubscriptionConnectionMinimumIdleSize(1)
                .setSubscriptionConnectionPoolSize(2);
        return Redisson.create(config);
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "off");
        int port = Integer.parseInt(args[0]);
        String persistence = System.getenv().getOrDefault("REPRO_PERSISTENCE", "none");
        String version = Redisson.class.getPackage().getImplementationVersion();
        say("Redisson %s, one redis-server on 127.0.0.1:%d, persistence: %s", version, port, persistence);

        RedissonClient a = client(port), b = client(port);
        RFencedLock lockA = a.getFencedLock("lock"), lockB = b.getFencedLock("lock");
        FencedResource resource = new FencedResource();

        // 1. A: three grants released, a fourth kept.
        long before = 0;
        for (int i = 1; i <= 4; i++) {
            Long token = lockA.tryLockAndGetToken(1, TimeUnit.SECONDS);
            say("A: tryLockAndGetToken -> token %d", token);
            resource.write("A", token);
            before = Math.max(before, token);
            if (i < 4) {
                lockA.unlock();
                say("A: unlock");
            }
        }
        say("A holds the lock with token %d; the counter key redisson_lock_token:{lock} = %d",
                before, lockA.getToken());

        // 2. The redis-server is killed and restarted.
        say("killing the redis-server (SIGKILL) and restarting it (persistence: %s)", persistence);
        Process p = new ProcessBuilder("bash", System.getenv("REPRO_SH"), "--restart-redis", "n1",
                String.valueOf(port)).inheritIO().start();
        if (p.waitFor() != 0) throw new IllegalStateException("restarting the redis-server failed");
        for (RedissonClient c : new RedissonClient[] {a, b}) {
            for (int i = 0; ; i++) { // wait until each client has reconnected
                try {
                    c.getFencedLock("lock").isLocked();
                    break;
                } catch (RuntimeException e) {
                    if (i >= 100) throw e;
                    Thread.sleep(100);
                }
            }
        }
        Long counter = lockB.getToken(); // GET of the counter key: 0 when the key is absent
        say("redis-server back; lock key held: %s, counter key: %s", lockB.isLocked(),
                counter == 0 ? "absent" : counter);

        // 3. B asks for the lock; A, which still believes it holds, writes again in between.
        Long first = null;
        boolean aReleased = false;
        for (int grant = 1; grant <= 6; grant++) {
            Long token = lockB.tryLockAndGetToken(1, TimeUnit.SECONDS);
            if (token == null) {
                say("B: tryLockAndGetToken(1 s) -> not granted (A's lock survived the restart)");
                resource.write("A (holder)", before);
                lockA.unlock();
                aReleased = true;
                say("A: unlock");
                grant--;
                continue;
            }
            say("B: tryLockAndGetToken(1 s) -> token %d%s", token,
                    aReleased ? "" : " (granted while A still believes it holds token " + before + ")");
            if (first == null) first = token;
            if (!aReleased && token == before) {
                say("B: token %d is the token A was granted before the restart: two holders, one token", token);
            }
            boolean accepted = resource.write("B (holder)", token);
            if (!aReleased && grant == 1) {
                resource.write("A (stale)", before);
            }
            lockB.unlock();
            say("B: unlock");
            if (accepted) break;
        }
        if (!aReleased) {
            try {
                lockA.unlock();
            } catch (RuntimeException e) {
                say("A: unlock threw %s (its lock key was lost in the restart)", e.getClass().getSimpleName());
            }
        }
        a.shutdown(0, 2, TimeUnit.SECONDS);
        b.shutdown(0, 2, TimeUnit.SECONDS);

        if (first != null && first <= before) {
            System.out.println("BUG REPRODUCED: after the redis-server restarted without persistence, Redisson "
                    + version + " granted token " + first + " again (tokens up to " + before
                    + " were granted before it): the fencing token went backwards, so the fenced resource"
                    + " refused the lock's new holder and accepted the stale one");
            System.exit(1);
        }
        System.out.println("not reproduced: the first token after the restart was " + first
                + ", above the " + before + " granted before it (persistence: " + persistence + ")");
        System.exit(0);
    }
}
