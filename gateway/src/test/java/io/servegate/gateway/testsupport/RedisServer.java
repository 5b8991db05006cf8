package io.servegate.gateway.testsupport;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code redis-server} process for tests, on a free loopback port, with persistence off
 * ({@code --save "" --appendonly no}). {@link #start()} returns once the server answers PING;
 * {@link #close()} stops it. The binary is taken from {@code $REDIS_SERVER} or the {@code PATH};
 * if it is missing, {@link #start()} fails (tests do not silently skip): CI installs Debian's
 * {@code redis-server} package.
 */
public final class RedisServer implements AutoCloseable {

    private static final long START_TIMEOUT_MILLIS = 10_000;

    private final String binary;
    private final int port;
    private final Path dir;
    private final Path logFile;
    /** Append-only file with fsync on every write: what was acknowledged survives a crash. */
    private final boolean durable;
    private Process process;

    private RedisServer(String binary, int port, Path dir, boolean durable) {
        this.binary = binary;
        this.port = port;
        this.dir = dir;
        this.durable = durable;
        this.logFile = dir.resolve("redis.log");
    }

    /**
     * Starts a server on a free loopback port.
     *
     * @throws IllegalStateException if {@code redis-server} is not installed or does not start
     */
    public static RedisServer start() {
        return start(false);
    }

    /**
     * Starts a server whose every acknowledged write is on disk ({@code --appendonly yes
     * --appendfsync always}), so that {@link #crash()} then {@link #restart()} keeps it.
     */
    public static RedisServer startDurable() {
        return start(true);
    }

    private static RedisServer start(boolean durable) {
        String binary = findBinary();
        IllegalStateException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            RedisServer server = new RedisServer(binary, freePort(), tempDir(), durable);
            try {
                server.launch();
                return server;
            } catch (IllegalStateException e) {
                // most likely the port was taken between probing and binding: try another
                last = e;
                server.stop();
            }
        }
        throw last;
    }

    /** @return the server's URI, {@code redis://127.0.0.1:PORT} */
    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    /** @return the port the server listens on */
    public int port() {
        return port;
    }

    /** @return whether the process is running */
    public boolean isRunning() {
        return process != null && process.isAlive();
    }

    /**
     * Starts the server again on the same port after {@link #stop()} or {@link #crash()} (with
     * empty data, unless it was started with {@link #startDurable()}).
     */
    public synchronized void restart() {
        stop();
        launch();
    }

    /** Stops the server (SIGTERM, then SIGKILL after 5 s) and waits for it to exit. Idempotent. */
    public synchronized void stop() {
        Process p = process;
        process = null;
        if (p == null || !p.isAlive()) {
            return;
        }
        p.destroy();
        try {
            if (!p.waitFor(5, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
        }
    }

    /** SIGKILL: the server dies at once, with no chance to save anything it had not already written. */
    public synchronized void crash() {
        Process p = process;
        process = null;
        if (p != null) {
            p.destroyForcibly();
            try {
                p.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Stops the server and deletes its temporary directory. */
    @Override
    public void close() {
        stop();
        try {
            if (durable) {
                try (var files = Files.walk(dir)) {
                    files.sorted(java.util.Comparator.reverseOrder()).filter(f -> !f.equals(dir))
                            .forEach(f -> f.toFile().delete());
                }
            }
            Files.deleteIfExists(logFile);
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // a leftover temp dir is harmless
        }
    }

    private synchronized void launch() {
        List<String> cmd = List.of(binary, "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", durable ? "yes" : "no", "--appendfsync", "always", "--daemonize", "no", "--dir", dir.toString(),
                "--logfile", "");
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
        try {
            process = pb.start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + binary + ": " + e.getMessage(), e);
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MILLIS);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("redis-server exited with " + process.exitValue()
                        + " on port " + port + "; log:\n" + logTail());
            }
            if (ping()) {
                return;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        stop();
        throw new IllegalStateException("redis-server on port " + port + " did not answer PING within "
                + START_TIMEOUT_MILLIS + " ms; log:\n" + logTail());
    }

    private boolean ping() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 500);
            s.setSoTimeout(1000);
            OutputStream out = s.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[64];
            int n = in.read(buf);
            return n > 0 && new String(buf, 0, n, StandardCharsets.US_ASCII).startsWith("+PONG");
        } catch (IOException e) {
            return false;
        }
    }

    private String logTail() {
        try {
            List<String> lines = Files.readAllLines(logFile);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    private static String findBinary() {
        String explicit = System.getenv("REDIS_SERVER");
        if (explicit != null && !explicit.isBlank()) {
            if (new File(explicit).canExecute()) {
                return explicit;
            }
            throw new IllegalStateException("$REDIS_SERVER=" + explicit + " is not an executable file");
        }
        String path = System.getenv().getOrDefault("PATH", "");
        for (String d : (path + File.pathSeparator + "/usr/bin" + File.pathSeparator + "/usr/sbin"
                + File.pathSeparator + "/usr/local/bin").split(File.pathSeparator)) {
            if (d.isEmpty()) {
                continue;
            }
            File f = new File(d, "redis-server");
            if (f.isFile() && f.canExecute()) {
                return f.getAbsolutePath();
            }
        }
        throw new IllegalStateException("redis-server not found on PATH: the Redis registry tests need a real "
                + "redis-server; CI installs Debian's 'redis-server' package (apt-get install -y redis-server), "
                + "or point $REDIS_SERVER at the binary");
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException("no free loopback port: " + e.getMessage(), e);
        }
    }

    private static Path tempDir() {
        try {
            return Files.createTempDirectory("servegate-redis-");
        } catch (IOException e) {
            throw new IllegalStateException("cannot create a temp dir: " + e.getMessage(), e);
        }
    }
}
