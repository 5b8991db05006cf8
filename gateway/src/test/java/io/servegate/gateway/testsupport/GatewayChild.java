package io.servegate.gateway.testsupport;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The gateway in its own JVM, started from the test classpath with a bounded heap, on free
 * loopback ports: a real process that a test can overload, SIGTERM and restart. The classpath
 * goes through an argument file (long command lines break some native libraries).
 */
public final class GatewayChild implements AutoCloseable {

    private static final Pattern HEAP = Pattern.compile(
            "^jvm_memory_used_bytes\\{[^}]*area=\"heap\"[^}]*\\} ([0-9.eE+-]+)$", Pattern.MULTILINE);

    private final Process process;
    private final int port;
    private final int adminPort;
    private final Path log;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private GatewayChild(Process process, int port, int adminPort, Path log) {
        this.process = process;
        this.port = port;
        this.adminPort = adminPort;
        this.log = log;
    }

    /**
     * Starts {@code GatewayApplication} with {@code -Xmx<heap>}, the cache off and {@code args}
     * ({@code --name=value}) last; returns once {@code /admin/ping} answers.
     */
    public static GatewayChild start(String heap, String... args) throws Exception {
        return start(List.of(), heap, args);
    }

    /**
     * {@link #start} under a descriptor limit ({@code ulimit -n descriptors}, set by a shell that
     * then becomes the JVM), which the replicas it starts inherit too.
     */
    public static GatewayChild startWithDescriptorLimit(int descriptors, String heap, String... args)
            throws Exception {
        return start(List.of("bash", "-c", "ulimit -n " + descriptors + " && exec \"$@\"", "bash"), heap, args);
    }

    private static GatewayChild start(List<String> prefix, String heap, String... args) throws Exception {
        int port = freePort();
        int adminPort = freePort();
        Path argFile = Files.createTempFile("servegate-gateway-cp", ".args");
        Files.writeString(argFile, "-cp \"" + System.getProperty("java.class.path").replace("\\", "\\\\") + "\"");
        argFile.toFile().deleteOnExit();
        Path log = Files.createTempFile("servegate-gateway", ".log");
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx" + heap, "-XX:+ExitOnOutOfMemoryError", "@" + argFile, "io.servegate.gateway.GatewayApplication",
                "--server.port=" + port, "--server.address=127.0.0.1", "--servegate.admin.port=" + adminPort,
                "--servegate.cache.enabled=false"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        GatewayChild child = new GatewayChild(p, port, adminPort, log);
        try {
            child.awaitReady(Duration.ofSeconds(90));
        } catch (Exception e) {
            p.destroyForcibly();
            throw e;
        }
        return child;
    }

    private void awaitReady(Duration timeout) throws Exception {
        long until = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < until) {
            if (!process.isAlive()) {
                throw new IOException("gateway exited with " + process.exitValue() + ":\n" + tail(40));
            }
            try {
                if (http.send(HttpRequest.newBuilder(URI.create(adminUrl() + "/admin/ping")).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            }
            Thread.sleep(100);
        }
        throw new IOException("gateway not ready within " + timeout + ":\n" + tail(40));
    }

    public String url() {
        return "http://127.0.0.1:" + port;
    }

    public String adminUrl() {
        return "http://127.0.0.1:" + adminPort;
    }

    public int port() {
        return port;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public int adminPort() {
        return adminPort;
    }

    /** The descriptors the gateway's process holds now (Linux: the entries of {@code /proc/<pid>/fd}). */
    public long descriptorsOpen() throws IOException {
        try (var fds = Files.list(Path.of("/proc", Long.toString(process.pid()), "fd"))) {
            return fds.count();
        }
    }

    /** The heap in use now, from the gateway's own Prometheus endpoint (the sum over heap pools). */
    public long heapUsedBytes() throws Exception {
        String text = http.send(HttpRequest.newBuilder(URI.create(url() + "/metrics")).timeout(Duration.ofSeconds(5))
                .header("Accept", "text/plain;version=0.0.4").build(), HttpResponse.BodyHandlers.ofString()).body();
        Matcher m = HEAP.matcher(text);
        double sum = 0;
        boolean any = false;
        while (m.find()) {
            sum += Double.parseDouble(m.group(1));
            any = true;
        }
        if (!any) {
            throw new IllegalStateException("no heap gauge in /metrics");
        }
        return (long) sum;
    }

    /** SIGTERM: asks the gateway to shut down gracefully; {@link #awaitExit} then says how it ended. */
    public void terminate() {
        process.destroy();
    }

    /** SIGKILL: the gateway dies at once, as in a crash; nothing of it runs afterwards. */
    public void kill() throws InterruptedException {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }

    /** The processes the gateway has started and their descendants, as they are now. */
    public List<ProcessHandle> descendants() {
        return process.descendants().toList();
    }

    /** The exit status, or -1 if it is still running after {@code timeout}. */
    public int awaitExit(Duration timeout) throws InterruptedException {
        return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) ? process.exitValue() : -1;
    }

    /** The last {@code lines} lines of the gateway's output. */
    public String tail(int lines) {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** Whether the gateway's output mentions {@code text} (e.g. an OutOfMemoryError). */
    public boolean logContains(String text) throws IOException {
        return Files.readString(log, StandardCharsets.UTF_8).contains(text);
    }

    @Override
    public void close() throws Exception {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
        Files.deleteIfExists(log);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
