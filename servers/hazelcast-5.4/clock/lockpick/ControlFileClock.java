package lockpick;

import com.hazelcast.internal.util.Clock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Hazelcast's own clock ({@code Clock.currentTimeMillis()}, by which a member expires CP
 * sessions), moved by lockpick's per-node clock control file: what libfaketime does for the
 * other servers, here without it (a JVM under libfaketime started several times slower, and
 * a member did not come up within a minute). Hazelcast takes a clock of its own from the system
 * property {@code com.hazelcast.clock.impl}; this one reads the file named by
 * {@code lockpick.clock.file}, written by the nemesis in libfaketime's format: {@code +1.500}
 * (an offset, seconds) or {@code -0.250 x10.000} (an offset, then a rate from the moment it is
 * seen, as libfaketime's {@code FAKETIME_XRESET}). The JVM's other clocks stay real.
 *
 * <p>A daemon thread reads the file every 5 ms, so a change reaches the clock within about
 * that; the clock itself only reads a volatile field.
 */
public final class ControlFileClock extends Clock.ClockImpl {
    private static final long POLL_MS = 5;

    /** From a real time on: fake = baseFake + (real - baseReal) * rate. */
    private static final class Setting {
        final String spec;
        final long baseReal;
        final long baseFake;
        final double rate;

        Setting(String spec, long baseReal, long baseFake, double rate) {
            this.spec = spec;
            this.baseReal = baseReal;
            this.baseFake = baseFake;
            this.rate = rate;
        }
    }

    private final Path file;
    private volatile Setting setting = new Setting("", 0, 0, 1.0);

    public ControlFileClock() {
        String path = System.getProperty("lockpick.clock.file");
        if (path == null) {
            throw new IllegalStateException("lockpick.clock.file is not set: the clock control file");
        }
        file = Paths.get(path);
        read();
        Thread poller = new Thread(this::poll, "lockpick-clock");
        poller.setDaemon(true);
        poller.start();
    }

    @Override
    protected long currentTimeMillis() {
        Setting s = setting;
        long real = System.currentTimeMillis();
        return s.baseFake + (long) ((real - s.baseReal) * s.rate);
    }

    private void poll() {
        while (true) {
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                return;
            }
            read();
        }
    }

    /** Takes the file's setting if it changed; a file missing or unreadable keeps the last. */
    private void read() {
        String spec;
        try {
            spec = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            return;
        }
        if (spec.isEmpty() || spec.equals(setting.spec)) {
            return;
        }
        String[] parts = spec.split("\\s+");
        double offsetS;
        double rate = 1.0;
        try {
            offsetS = Double.parseDouble(parts[0]);
            if (parts.length > 1 && parts[1].startsWith("x")) {
                rate = Double.parseDouble(parts[1].substring(1));
            }
        } catch (NumberFormatException e) {
            System.err.println("lockpick-clock: ignoring " + file + ": " + spec);
            return;
        }
        long real = System.currentTimeMillis();
        setting = new Setting(spec, real, real + Math.round(offsetS * 1000), rate);
        System.err.println("lockpick-clock: " + spec);
    }
}
