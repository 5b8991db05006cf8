package io.servegate.loadgen.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A model container as a child process ({@code java -jar container.jar ...}), for containers the
 * load generator cannot run in its own JVM (the ONNX container's native runtime) or should not (replicas
 * whose timing must not share the load generator's heap and threads). Waits for the
 * SDK's {@code READY port=N} line; later output goes to a log file. {@link #close()} sends
 * SIGTERM (the SDK drains), then SIGKILL.
 */
public final class ContainerChild implements AutoCloseable {

    private final Process process;
    private final int port;
    private final Thread shutdownHook;

    private ContainerChild(Process process, int port) {
        this.process = process;
        this.port = port;
        this.shutdownHook = new Thread(process::destroyForcibly, "stop-container");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Starts {@code jar} with {@code args} (plus {@code --host 127.0.0.1 --port 0}) and waits up to
     * {@code timeoutS} for it to report its port; its output is copied to {@code log}.
     */
    public static ContainerChild start(Path jar, List<String> jvmArgs, List<String> args, Path log, long timeoutS)
            throws IOException, InterruptedException {
        if (!Files.isRegularFile(jar)) {
            throw new IOException("no container jar at " + jar.toAbsolutePath()
                    + " (build it: mvn -pl containers/onnx -am package -DskipTests)");
        }
        return start(jvmArgs, List.of("-jar", jar.toString()), args, log, timeoutS);
    }

    /**
     * As {@link #start(Path, List, List, Path, long)} for a container whose main class is on this
     * JVM's class path, such as the emulated container, which the load generator's jar bundles.
     */
    public static ContainerChild start(Class<?> mainClass, List<String> jvmArgs, List<String> args, Path log,
            long timeoutS) throws IOException, InterruptedException {
        return start(jvmArgs, List.of("-cp", System.getProperty("java.class.path"), mainClass.getName()), args, log,
                timeoutS);
    }

    /**
     * A container that is not a JVM, such as a Python SDK script ({@code /usr/bin/python3
     * bench/python_cold_container.py}): {@code command} as given, with {@code environment} added to
     * this process's (the Python SDK reads {@code HOST}, {@code PORT} and its settings there; they
     * are set to loopback and 0 unless given).
     */
    public static ContainerChild startProgram(List<String> command, Map<String, String> environment, Path log,
            long timeoutS) throws IOException, InterruptedException {
        Map<String, String> env = new HashMap<>(Map.of("HOST", GatewayProcess.HOST, "PORT", "0"));
        env.putAll(environment);
        return start(command, env, log, timeoutS);
    }

    private static ContainerChild start(List<String> jvmArgs, List<String> program, List<String> args, Path log,
            long timeoutS) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(GatewayProcess.currentJava());
        cmd.addAll(jvmArgs);
        cmd.addAll(program);
        cmd.addAll(args);
        cmd.addAll(List.of("--host", GatewayProcess.HOST, "--port", "0"));
        return start(cmd, Map.of(), log, timeoutS);
    }

    private static ContainerChild start(List<String> cmd, Map<String, String> environment, Path log, long timeoutS)
            throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(cmd).redirectErrorStream(true);
        builder.environment().putAll(environment);
        Process p = builder.start();
        CompletableFuture<Integer> ready = new CompletableFuture<>();
        Thread pump = new Thread(() -> pump(p, log, ready), "container-output");
        pump.setDaemon(true);
        pump.start();
        try {
            return new ContainerChild(p, ready.get(timeoutS, TimeUnit.SECONDS));
        } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
            p.destroyForcibly();
            throw new IOException("the container " + cmd + " did not print READY port=N within " + timeoutS
                    + " s; see " + log, e);
        }
    }

    /** Copies the child's output to the log, completing {@code ready} with the port it reports. */
    private static void pump(Process p, Path log, CompletableFuture<Integer> ready) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                var out = Files.newBufferedWriter(log, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                out.write(line);
                out.newLine();
                out.flush();
                if (!ready.isDone() && line.startsWith("READY port=")) {
                    ready.complete(Integer.parseInt(line.substring("READY port=".length()).trim()));
                }
            }
        } catch (IOException | RuntimeException e) {
            ready.completeExceptionally(e);
        }
        ready.completeExceptionally(new IOException("the container exited before it was ready"));
    }

    /** CPU time the process has used so far (all threads, user and system), or null where the OS does not say. */
    public Duration cpuTime() {
        return process.info().totalCpuDuration().orElse(null);
    }

    /** Its resident set size now, from {@code /proc}, or -1 where the OS does not say. */
    public long residentBytes() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(
                    process.pid()), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    /** Its OIP gRPC address, {@code 127.0.0.1:port}. */
    public String address() {
        return GatewayProcess.HOST + ":" + port;
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
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
