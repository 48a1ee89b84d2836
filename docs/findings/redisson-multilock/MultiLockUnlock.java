// Redisson MultiLock: an unlock() that meets a sub-lock its restarted server forgot.
//
// Three redis-servers without persistence (n1, n2, n3; repro.sh starts them), one RLock "lock"
// on each. The holder (three RedissonClients, one per server) takes the MultiLock
// [n1, n2, n3] with the lock watchdog; n1 is killed (SIGKILL) and restarted empty; the holder
// calls unlock(). Then, after 2.5 lock-watchdog timeouts, another RedissonClient set (the rival)
// tries the same MultiLock with a 1 s wait.
//
//   3.27.2 and later: unlock() is locks.forEach(Lock::unlock); it throws at n1 and never reaches
//                     n2, n3, which stay held and renewed by the watchdog: the rival fails.
//   3.27.1:           unlock() sends every sub-lock its unlockAsync() and joins them: n2, n3
//                     are released, the rival gets the lock.
//
// Every step is explicit (no race): usage java -cp 'lib/*' MultiLockUnlock.java PORT1 PORT2 PORT3
// with REPRO_SH and REPRO_TMP set (repro.sh does), which it calls to restart n1.
// Exit 1: BUG REPRODUCED; exit 0: not reproduced.

import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

public class MultiLockUnlock {
    static final long WATCHDOG_MS = 2000;
    static final long T0 = System.nanoTime();

    static void say(String fmt, Object... args) {
        System.out.printf("[%6.3f s] %s%n", (System.nanoTime() - T0) / 1e9, String.format(fmt, args));
    }

    static RedissonClient client(int port) {
        Config config = new Config();
        config.setLockWatchdogTimeout(WATCHDOG_MS); // renewed every WATCHDOG_MS / 3
        config.useSingleServer()
                .setAddress("redis://127.0.0.1:" + port)
                .setConnectionMinimumIdleSize(1)
                .setConnectionPoolSize(2)
                .setSubscriptionConnectionMinimumIdleSize(1)
                .setSubscriptionConnectionPoolSize(2);
        return Redisson.create(config);
    }

    /** What each server has of "lock", asked through the given (observer) clients. */
    static String state(List<RedissonClient> clients) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < clients.size(); i++) {
            RLock l = clients.get(i).getLock("lock");
            long ttl = l.remainTimeToLive(); // PTTL: -2 no key
            sb.append(i == 0 ? "" : ", ").append("n").append(i + 1).append(": ")
                    .append(ttl == -2 ? "free" : "held (pttl " + ttl + " ms)");
        }
        return sb.toString();
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "off");
        int[] ports = {Integer.parseInt(args[0]), Integer.parseInt(args[1]), Integer.parseInt(args[2])};
        String version = Redisson.class.getPackage().getImplementationVersion();
        say("Redisson %s, lockWatchdogTimeout %d ms, servers n1-n3 on 127.0.0.1:%d,%d,%d",
                version, WATCHDOG_MS, ports[0], ports[1], ports[2]);

        List<RedissonClient> holder = new ArrayList<>(), rival = new ArrayList<>();
        for (int p : ports) {
            holder.add(client(p));
            rival.add(client(p));
        }
        RLock holderLock = holder.get(0).getMultiLock(
                holder.get(0).getLock("lock"), holder.get(1).getLock("lock"), holder.get(2).getLock("lock"));
        RLock rivalLock = rival.get(0).getMultiLock(
                rival.get(0).getLock("lock"), rival.get(1).getLock("lock"), rival.get(2).getLock("lock"));

        // 1. The holder takes the MultiLock, watchdog on (no lease given).
        boolean got = holderLock.tryLock(5, TimeUnit.SECONDS);
        say("holder: tryLock(5 s) on MultiLock[n1, n2, n3] -> %s", got);
        if (!got) throw new IllegalStateException("the holder could not take a free lock");
        say("state: %s", state(rival));

        // 2. n1 is killed and restarted empty (no persistence).
        say("killing n1 (SIGKILL) and restarting it without persistence");
        Process p = new ProcessBuilder("bash", System.getenv("REPRO_SH"), "--restart-redis", "n1",
                String.valueOf(ports[0])).inheritIO().start();
        if (p.waitFor() != 0) throw new IllegalStateException("restarting n1 failed");
        // Wait until both clients of n1 answer again (they reconnect on their own).
        for (List<RedissonClient> cs : List.of(holder, rival)) {
            for (int i = 0; ; i++) {
                try {
                    cs.get(0).getLock("lock").isLocked();
                    break;
                } catch (RuntimeException e) {
                    if (i >= 100) throw e;
                    Thread.sleep(100);
                }
            }
        }
        say("n1 is back; state: %s", state(rival));

        // 3. The holder releases.
        try {
            holderLock.unlock();
            say("holder: unlock() returned normally");
        } catch (RuntimeException e) {
            say("holder: unlock() threw %s: %s", e.getClass().getName(), e.getMessage());
        }
        say("state right after the holder's unlock: %s", state(rival));

        // 4. Past the watchdog timeout: a key nobody renews would have expired.
        Thread.sleep(WATCHDOG_MS * 5 / 2);
        String after = state(rival);
        say("state %d ms later (watchdog timeout %d ms): %s", WATCHDOG_MS * 5 / 2, WATCHDOG_MS, after);

        // 5. Another client tries the lock, with a short wait.
        boolean rivalGot = rivalLock.tryLock(1, TimeUnit.SECONDS);
        say("rival (other RedissonClients): tryLock(1 s) on MultiLock[n1, n2, n3] -> %s", rivalGot);
        if (rivalGot) rivalLock.unlock();

        for (RedissonClient c : holder) c.shutdown(0, 2, TimeUnit.SECONDS);
        for (RedissonClient c : rival) c.shutdown(0, 2, TimeUnit.SECONDS);

        if (!rivalGot) {
            System.out.println("BUG REPRODUCED: Redisson " + version + " MultiLock.unlock() stopped at the sub-lock"
                    + " restarted n1 forgot and left the later sub-locks held and renewed by the watchdog ("
                    + after + "), so another client cannot take the lock");
            System.exit(1);
        }
        System.out.println("not reproduced: Redisson " + version + " MultiLock.unlock() released the sub-locks n1's"
                + " restart left, and another client took the lock");
        System.exit(0);
    }
}
