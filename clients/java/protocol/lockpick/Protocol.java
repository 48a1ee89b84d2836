package lockpick;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * The lockpick client protocol (docs/client-protocol.md), versions 1 and 2, for Java adapters:
 * reads JSON lines from stdin and answers one request at a time, in order, on stdout. An
 * adapter only builds its lock from {@link Init} and maps each op to the library's call; one
 * whose library tells its user of a lost lock declares {@link Adapter#events} and calls
 * {@link #event} from the library's callback (version 2).
 *
 * <p>What an op's outcome means is the adapter's to say: it returns {@link Reply#fail} only
 * where the library <em>knows</em> the op did not happen (a wait that gave up, an unlock of a
 * lock it does not hold). Everything else an op throws is {@link Reply#info}, unknown, as in
 * the Python and Node helpers: a timeout or a broken connection may have happened on the
 * server.
 */
public final class Protocol {
    /** Version 1 for an adapter that sends no events; 2 for one that declares events. */
    public static final int VERSION = 1;
    public static final int VERSION_EVENTS = 2;

    /** Guards stdout: a library's thread writes events while the main one writes replies. */
    private static final Object WRITING = new Object();
    private static PrintStream stdout;
    /** Events told before the hello went out, written right after it. */
    private static final List<ObjectNode> EARLY = new ArrayList<>();
    private static boolean helloSent;
    /**
     * This lockpick takes events (its init's {@code newest_protocol} is 2 or more) and the
     * adapter declared some; otherwise {@link #event} sends nothing.
     */
    private static boolean eventsOn;

    private static final ObjectMapper JSON = new ObjectMapper();

    private Protocol() {}

    /** One reply to a request; the helper adds its {@code id}. */
    public static final class Reply {
        private final ObjectNode node = JSON.createObjectNode();

        private Reply(String type) {
            node.put("type", type);
        }

        /** It happened. {@code token} and {@code leaseMs} may be null (none, no lease). */
        public static Reply ok(Long token, Long leaseMs, String note) {
            Reply reply = new Reply("ok");
            reply.node.put("token", token);
            reply.node.put("lease_ms", leaseMs);
            if (note != null) {
                reply.node.put("note", note);
            }
            return reply;
        }

        public static Reply ok() {
            return ok(null, null, null);
        }

        /**
         * On an acquire's {@code ok}: the value by which the lock's server knows this holder
         * (Redisson's hash field), when the library says it: the server's record of the lock
         * attributes that value to this process (docs/server-record.md). Only from what the
         * library exposes, never a value the adapter computed.
         */
        public Reply owner(String owner) {
            node.put("owner", owner);
            return this;
        }

        /** It definitely did not happen. */
        public static Reply fail(String reason) {
            Reply reply = new Reply("fail");
            reply.node.put("reason", reason);
            return reply;
        }

        /** Unknown: it may or may not have happened; lockpick retires the process. */
        public static Reply info(String reason) {
            Reply reply = new Reply("info");
            reply.node.put("reason", reason);
            return reply;
        }
    }

    /** One op: the request in, its reply out. A thrown exception is {@code info}. */
    @FunctionalInterface
    public interface Op {
        Reply run(JsonNode request) throws Exception;
    }

    /** Builds the adapter from init; a {@link BadInit} is the scenario's mistake. */
    @FunctionalInterface
    public interface Start {
        Adapter start(Init init) throws Exception;
    }

    /** An init this adapter cannot take: an unknown key in {@code extra}, a mistyped value. */
    public static final class BadInit extends Exception {
        public BadInit(String message) {
            super(message);
        }
    }

    /** What the hello says, and the ops behind it. */
    public static final class Adapter {
        final String name;
        final String library;
        final String version;
        final Map<String, Op> ops = new LinkedHashMap<>();
        final List<String> events = new ArrayList<>();

        /**
         * {@code libraryClass} is a class of the library under test: its name and version are
         * read from the jar it was loaded from, as installed, never written here.
         */
        public Adapter(String name, Class<?> libraryClass) {
            this.name = name;
            String[] installed = installed(libraryClass);
            this.library = installed[0];
            this.version = installed[1];
        }

        public Adapter op(String type, Op op) {
            ops.put(type, op);
            return this;
        }

        /** The events ({@code lost}, {@code suspended}, {@code reconnected}) it may send. */
        public Adapter events(String... names) {
            events.addAll(List.of(names));
            return this;
        }
    }

    /**
     * Tells lockpick, unasked, what the library just told its user ({@code name}: one the
     * adapter declared); {@code token} and {@code reason} may be null. Safe from any thread;
     * one told before the hello goes out right after it.
     */
    public static void event(String name, Long token, String reason) {
        ObjectNode line = JSON.createObjectNode().put("type", "event").put("event", name);
        line.put("token", token);
        if (reason != null) {
            line.put("reason", reason);
        }
        synchronized (WRITING) {
            if (!helloSent) {
                EARLY.add(line);
                return;
            }
            if (eventsOn) {
                write(stdout, line);
            }
        }
    }

    /** The init message (docs/client-protocol.md, "init → hello"). */
    public static final class Init {
        public final List<String> nodes = new ArrayList<>();
        public final String lock;
        public final long ttlMs;
        public final long acquireTimeoutMs;
        public final long retryDelayMinMs;
        public final long retryDelayMaxMs;
        public final long opTimeoutMs;
        public final long client;
        public final long process;
        public final long seed;
        public final ObjectNode extra;
        /** On a redis-sentinel server, its sentinels and the master's name; null elsewhere. */
        public final Sentinels sentinels;

        Init(JsonNode m) {
            m.get("nodes").forEach(n -> nodes.add(n.asText()));
            lock = m.get("lock").asText();
            ttlMs = m.get("ttl_ms").asLong();
            acquireTimeoutMs = m.get("acquire_timeout_ms").asLong();
            retryDelayMinMs = m.get("retry_delay_ms").get(0).asLong();
            retryDelayMaxMs = m.get("retry_delay_ms").get(1).asLong();
            opTimeoutMs = m.get("op_timeout_ms").asLong();
            client = m.get("client").asLong();
            process = m.get("process").asLong();
            seed = m.get("seed").asLong();
            JsonNode e = m.get("extra");
            extra = e instanceof ObjectNode ? (ObjectNode) e : JSON.createObjectNode();
            JsonNode s = m.get("sentinels");
            sentinels = s == null || s.isNull() ? null : new Sentinels(s);
        }
    }

    /**
     * The init's {@code sentinels}: where a Sentinel-aware library asks for the master, reached
     * directly, and the NAT map from the node addresses they answer to the nodes' proxies.
     */
    public static final class Sentinels {
        /** The name the sentinels know the master by. */
        public final String master;
        /** The sentinels as {@code host:port}. */
        public final List<String> addrs = new ArrayList<>();
        /** Each node address the sentinels may answer ({@code host:port}) to its proxy's. */
        public final Map<String, String> nat = new LinkedHashMap<>();

        Sentinels(JsonNode m) {
            master = m.get("master").asText();
            m.get("addrs").forEach(a -> addrs.add(a.asText()));
            JsonNode n = m.get("nat");
            if (n != null) {
                n.fields().forEachRemaining(e -> nat.put(e.getKey(), e.getValue().asText()));
            }
        }
    }

    /**
     * The {@code [client] init} keys an adapter accepts, each with its type and default: the one
     * place an adapter declares them. {@link #read} refuses a key not declared and a value of
     * another type, so a typo in a scenario is an error, never a silent default.
     */
    public static final class Keys {
        private final Map<String, Object> defaults = new LinkedHashMap<>();
        private final Map<String, String> about = new LinkedHashMap<>();

        /** A boolean key. */
        public Keys bool(String key, boolean dflt, String what) {
            defaults.put(key, dflt);
            about.put(key, what);
            return this;
        }

        /** The declared keys and what each does, for a message. */
        public String describe() {
            StringBuilder s = new StringBuilder();
            about.forEach((k, v) -> s.append(s.length() == 0 ? "" : "; ")
                    .append(k).append(" (").append(defaults.get(k).getClass().getSimpleName().toLowerCase())
                    .append(", default ").append(defaults.get(k)).append("): ").append(v));
            return s.toString();
        }

        /** The values {@code extra} gives, the defaults for the rest. */
        public Values read(ObjectNode extra) throws BadInit {
            Map<String, Object> values = new LinkedHashMap<>(defaults);
            for (Iterator<Map.Entry<String, JsonNode>> it = extra.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> field = it.next();
                String key = field.getKey();
                if (!defaults.containsKey(key)) {
                    throw new BadInit("unknown init key \"" + key + "\"; this adapter takes: " + describe());
                }
                JsonNode value = field.getValue();
                if (defaults.get(key) instanceof Boolean) {
                    if (!value.isBoolean()) {
                        throw new BadInit("init key \"" + key + "\" must be true or false, not " + value);
                    }
                    values.put(key, value.booleanValue());
                }
            }
            return new Values(values);
        }
    }

    /** What {@link Keys#read} found. */
    public static final class Values {
        private final Map<String, Object> values;

        Values(Map<String, Object> values) {
            this.values = values;
        }

        public boolean bool(String key) {
            return (Boolean) values.get(key);
        }
    }

    /** "host:port" → {host, port}. */
    public static String[] hostPort(String address) {
        int colon = address.lastIndexOf(':');
        return new String[] {address.substring(0, colon), address.substring(colon + 1)};
    }

    /**
     * Runs the loop until stdin closes. Diagnostics go to stderr; so does anything a library
     * prints on System.out, which is pointed at stderr before the library loads: stdout
     * carries protocol lines only.
     */
    public static void serve(Start start) {
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        synchronized (WRITING) {
            stdout = out;
        }
        System.setOut(System.err);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Adapter adapter = null;
        try {
            String line;
            while ((line = in.readLine()) != null) {
                JsonNode request = JSON.readTree(line);
                long id = request.get("id").asLong();
                String type = request.get("type").asText();
                if (type.equals("init")) {
                    adapter = init(start, request, id, out);
                    continue;
                }
                Op op = adapter == null ? null : adapter.ops.get(type);
                if (op == null) {
                    System.err.println("adapter: unexpected request " + line);
                    System.exit(1);
                }
                Reply reply;
                try {
                    reply = op.run(request);
                } catch (Exception e) {
                    // The outcome of a request that raised is unknown.
                    System.err.println("adapter: " + type + " raised:");
                    e.printStackTrace();
                    reply = Reply.info(e.getClass().getSimpleName() + ": " + e.getMessage());
                }
                write(out, reply.node.put("id", id));
            }
        } catch (IOException e) {
            System.err.println("adapter: reading stdin: " + e);
            System.exit(1);
        }
        // lockpick closed our stdin: everything asked was answered. The libraries' own
        // non-daemon threads (Netty, Curator) would keep the JVM alive.
        System.exit(0);
    }

    private static Adapter init(Start start, JsonNode request, long id, PrintStream out) {
        try {
            Adapter adapter = start.start(new Init(request));
            // init's "protocol" is the oldest version lockpick speaks (1, which every adapter
            // takes); "newest_protocol", the newest: events need 2.
            int newest = request.path("newest_protocol").asInt(request.path("protocol").asInt(VERSION));
            boolean on = !adapter.events.isEmpty() && newest >= VERSION_EVENTS;
            if (!adapter.events.isEmpty() && !on) {
                System.err.println("adapter: lockpick speaks protocol " + newest + " at most: no events sent");
            }
            ObjectNode hello = JSON.createObjectNode()
                    .put("type", "hello")
                    .put("id", id)
                    .put("protocol", on ? VERSION_EVENTS : VERSION)
                    .put("adapter", adapter.name)
                    .put("library", adapter.library)
                    .put("version", adapter.version);
            adapter.ops.keySet().forEach(hello.putArray("ops")::add);
            if (on) {
                adapter.events.forEach(hello.putArray("events")::add);
            }
            synchronized (WRITING) {
                write(out, hello);
                helloSent = true;
                eventsOn = on;
                if (on) {
                    EARLY.forEach(line -> write(out, line));
                }
                EARLY.clear();
            }
            return adapter;
        } catch (Exception e) {
            // No hello: lockpick stops the run with a harness error that shows this line and
            // the end of stderr. A bad key surely did not start anything (fail); anything else
            // from the library at start is not known to have done nothing (info).
            if (e instanceof BadInit) {
                System.err.println("adapter: bad init: " + e.getMessage());
            } else {
                System.err.println("adapter: init failed:");
                e.printStackTrace();
            }
            Reply reply = e instanceof BadInit
                    ? Reply.fail("bad init: " + e.getMessage())
                    : Reply.info("init: " + e.getClass().getSimpleName() + ": " + e.getMessage());
            write(out, reply.node.put("id", id));
            System.exit(2);
            return null;
        }
    }

    private static void write(PrintStream out, ObjectNode message) {
        synchronized (WRITING) {
            out.print(message.toString());
            out.print('\n');
            out.flush();
        }
    }

    /**
     * {artifactId, version} of the jar {@code c} was loaded from: the artifact from the jar's
     * pom.properties (else its manifest's Implementation-Title), the version from its manifest's Implementation-Version (what
     * {@link Package#getImplementationVersion} reads), falling back to pom.properties.
     */
    static String[] installed(Class<?> c) {
        Path jar;
        try {
            jar = Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException | NullPointerException e) {
            throw new IllegalStateException("cannot tell which jar " + c.getName() + " came from", e);
        }
        try (JarFile file = new JarFile(jar.toFile())) {
            // A jar that shades its dependencies (Hazelcast's) carries their pom.properties
            // too, jackson-core's first: the one whose artifact the manifest's
            // Implementation-Title names is the jar's own; else the first, as for a plain jar.
            String title = c.getPackage().getImplementationTitle();
            Properties pom = new Properties();
            for (Iterator<JarEntry> it = file.entries().asIterator(); it.hasNext(); ) {
                JarEntry entry = it.next();
                if (entry.getName().startsWith("META-INF/maven/") && entry.getName().endsWith("/pom.properties")) {
                    Properties found = new Properties();
                    try (InputStream s = file.getInputStream(entry)) {
                        found.load(s);
                    }
                    if (pom.isEmpty()) {
                        pom = found;
                    }
                    if (title != null && title.equals(found.getProperty("artifactId"))) {
                        pom = found;
                        break;
                    }
                }
            }
            String artifact = pom.getProperty("artifactId");
            if (artifact == null) {
                // Jars built by Gradle (Spring's) carry no pom.properties; their manifest names
                // the artifact as Implementation-Title.
                artifact = c.getPackage().getImplementationTitle();
            }
            String version = c.getPackage().getImplementationVersion();
            if (version == null) {
                version = pom.getProperty("version");
            }
            if (artifact == null || version == null) {
                throw new IllegalStateException(jar + " names no artifact or version (pom.properties, manifest)");
            }
            return new String[] {artifact, version};
        } catch (IOException e) {
            throw new IllegalStateException("reading " + jar, e);
        }
    }
}
