package io.servegate.loadgen.harness;

import io.servegate.workload.admin.GatewayAdminClient;
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

/**
 * The gateway as a child process of the load generator ({@code java -jar gateway.jar}), on free
 * loopback ports, with its standard output and error in a log file, so that the load generator
 * and the gateway do not share a heap or a JIT. {@link #close()} stops it (SIGTERM, then SIGKILL),
 * and so does a shutdown hook if the load generator exits first.
 */
public final class GatewayProcess implements AutoCloseable {

    /** Where the gateway listens; its admin server is on loopback by default too. */
    public static final String HOST = "127.0.0.1";

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private final Process process;
    private final List<String> command;
    private final int port;
    private final int adminPort;
    private final Path log;
    private final Thread shutdownHook;

    private GatewayProcess(Process process, List<String> command, int port, int adminPort, Path log) {
        this.process = process;
        this.command = command;
        this.port = port;
        this.adminPort = adminPort;
        this.log = log;
        this.shutdownHook = new Thread(process::destroyForcibly, "stop-gateway");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * The command line of a gateway child: the cache is off (benchmarks send distinct inputs, and
     * a cache would only add its lookup cost to the path measured) and both servers are on
     * loopback.
     *
     * @param java the {@code java} executable
     * @param jvmArgs JVM options, e.g. {@code -Xmx1g}
     * @param jar the gateway's executable jar
     * @param port the query port
     * @param adminPort the admin port
     * @param gatewayArgs further {@code --name=value} settings, appended last so that they win
     */
    public static List<String> command(String java, List<String> jvmArgs, Path jar, int port, int adminPort,
            List<String> gatewayArgs) {
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.addAll(jvmArgs);
        cmd.add("-jar");
        cmd.add(jar.toString());
        cmd.add("--server.port=" + port);
        cmd.add("--server.address=" + HOST);
        cmd.add("--servegate.admin.port=" + adminPort);
        cmd.add("--servegate.admin.address=" + HOST);
        cmd.add("--servegate.cache.enabled=false");
        // the load goes over HTTP; the OIP gRPC server's fixed port would clash between runs
        cmd.add("--servegate.oip.grpc-port=0");
        cmd.addAll(gatewayArgs);
        return List.copyOf(cmd);
    }

    /** The {@code java} executable of the running JVM. */
    public static String currentJava() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** A loopback port that was free a moment ago. */
    public static int freeLoopbackPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
            return s.getLocalPort();
        }
    }

    /**
     * Starts the gateway on two free loopback ports, its output going to {@code log}
     * (overwritten). Returns at once: call {@link #awaitReady} before using it.
     */
    public static GatewayProcess start(Path jar, List<String> jvmArgs, List<String> gatewayArgs, Path log)
            throws IOException {
        if (!Files.isRegularFile(jar)) {
            throw new IOException("no gateway jar at " + jar.toAbsolutePath()
                    + " (build it: mvn -pl gateway -am package -DskipTests)");
        }
        int port = freeLoopbackPort();
        int adminPort = freeLoopbackPort();
        while (adminPort == port) {
            adminPort = freeLoopbackPort();
        }
        List<String> cmd = command(currentJava(), jvmArgs, jar, port, adminPort, gatewayArgs);
        Path parent = log.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        return new GatewayProcess(p, cmd, port, adminPort, log);
    }

    /** Waits until the admin server answers {@code GET /admin/ping}. */
    public void awaitReady(GatewayAdminClient admin, Duration timeout) throws IOException, InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < until) {
            if (!process.isAlive()) {
                throw new IOException("the gateway exited with status " + process.exitValue() + " before it was "
                        + "ready; its log " + log + " ends:\n" + tail(40));
            }
            if (admin.ping()) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IOException("the gateway did not answer /admin/ping within " + timeout + "; its log " + log
                + " ends:\n" + tail(40));
    }

    /**
     * Waits until its admin API answers ({@link #awaitReady}) and it reports ready
     * ({@link #awaitHealthReady}): what a benchmark waits for before it loads the gateway, as a load
     * balancer would, so that the gateway's own warm-up is not in the figures.
     */
    public void awaitLoadable(Duration timeout) throws IOException, InterruptedException {
        awaitReady(admin(), timeout);
        awaitHealthReady(timeout);
    }

    /**
     * Waits until {@code GET /v2/health/ready} on the query port answers 200: the gateway has
     * finished its warm-up, as a load balancer's readiness probe would see it (polled every 10 ms).
     */
    public void awaitHealthReady(Duration timeout) throws IOException, InterruptedException {
        HttpRequest ready = HttpRequest.newBuilder(URI.create("http://" + HOST + ":" + port + "/v2/health/ready"))
                .timeout(Duration.ofSeconds(2)).build();
        long until = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < until) {
            if (!process.isAlive()) {
                throw new IOException("the gateway exited with status " + process.exitValue() + " before it was "
                        + "ready; its log " + log + " ends:\n" + tail(40));
            }
            try {
                if (HTTP.send(ready, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(10);
        }
        throw new IOException("the gateway was not ready within " + timeout + "; see " + log);
    }

    /**
     * A client of this gateway's admin API; 60 s per call, because {@code add_container} probes
     * the replica's readiness first, which takes seconds on a loaded machine.
     */
    public GatewayAdminClient admin() {
        return new GatewayAdminClient(HOST, adminPort, Duration.ofSeconds(60));
    }

    public int port() {
        return port;
    }

    public int adminPort() {
        return adminPort;
    }

    public Path log() {
        return log;
    }

    public List<String> command() {
        return command;
    }

    /** The gateway's process id, for reading its CPU time. */
    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The last {@code lines} lines of the log. */
    public String tail(int lines) {
        List<String> all = logLines();
        return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    }

    /** Log lines that look like trouble (ERROR or WARN level, exceptions), at most {@code max}. */
    public List<String> problems(int max) {
        return logLines().stream().filter(GatewayProcess::isProblem).limit(max).toList();
    }

    /** How many log lines look like trouble. */
    public long problemCount() {
        return logLines().stream().filter(GatewayProcess::isProblem).count();
    }

    public static boolean isProblem(String line) {
        return line.contains(" ERROR ") || line.contains(" WARN ") || line.contains("Exception");
    }

    private List<String> logLines() {
        try {
            return Files.readAllLines(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return List.of("(log unreadable: " + e + ")");
        }
    }

    /** Kills the gateway at once ({@code kill -9}: no shutdown, no leaving its fleet), and waits until it is gone. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** Asks the gateway to shut down gracefully (SIGTERM) and returns at once; {@link #close} waits for it. */
    public void terminate() {
        process.destroy();
    }

    /** Stops the gateway: SIGTERM, up to 15 s for a graceful shutdown, then SIGKILL. */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(15, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(5, TimeUnit.SECONDS);
        }
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is already shutting down; the hook will run, harmlessly
        }
    }
}
