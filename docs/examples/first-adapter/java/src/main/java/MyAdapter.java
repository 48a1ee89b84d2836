// The README's first adapter in Java: a lock on one Redis with SET NX PX, no fencing token, on
// Lettuce and lockpick's Java helper (protocol/lockpick/Protocol.java, a copy of
// clients/java/protocol/lockpick/Protocol.java; here a link to it). Build: mvn package.
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.UUID;
import lockpick.Protocol;
import lockpick.Protocol.Reply;

public final class MyAdapter {
    public static void main(String[] args) {
        Protocol.serve(init -> {
            String[] hostPort = Protocol.hostPort(init.nodes.get(0)); // the proxy in front of n1
            RedisCommands<String, String> redis = RedisClient
                    .create("redis://" + hostPort[0] + ":" + hostPort[1]).connect().sync();
            String key = "mylock:" + init.lock;
            String[] value = {null};
            return new Protocol.Adapter("my-java-adapter", RedisClient.class)
                    .op("acquire", request -> {
                        value[0] = UUID.randomUUID().toString();
                        long deadline = System.currentTimeMillis() + init.acquireTimeoutMs;
                        while (!"OK".equals(redis.set(key, value[0], SetArgs.Builder.nx().px(init.ttlMs)))) {
                            if (System.currentTimeMillis() > deadline) {
                                return Reply.fail("timeout-waiting");
                            }
                            Thread.sleep(10);
                        }
                        // No token, and no lease: SET PX does not say how long is left (never
                        // a lease the adapter computed, docs/client-protocol.md). The owner is
                        // the value the server holds, so lockpick can tell whose its key is.
                        return Reply.ok(null, null, null).owner(value[0]);
                    })
                    .op("release", request -> {
                        Long ours = redis.eval("if redis.call('GET', KEYS[1]) == ARGV[1] then "
                                + "return redis.call('DEL', KEYS[1]) end return 0",
                                ScriptOutputType.INTEGER, new String[] {key}, value[0]);
                        return ours == 1 ? Reply.ok() : Reply.fail("not-owner");
                    });
        });
    }
}
