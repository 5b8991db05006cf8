package io.servegate.gateway.testsupport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A model container in its own JVM, started from the test classpath: a real process on a real
 * loopback port, which a test can SIGTERM or SIGKILL.
 */
public final class ContainerProcess implements AutoCloseable {

    /** The emulated container's main class (β + α·b per batch, fault injection flags). */
    public static final String EMULATED = "io.servegate.containers.emulated.EmulatedContainer";

    private final Process process;
    private final int port;

    private ContainerProcess(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /** Starts {@code mainClass} with {@code --host 127.0.0.1 --port 0} plus {@code args}; waits for READY. */
    public static ContainerProcess start(String mainClass, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-cp", System.getProperty("java.class.path"), mainClass, "--host", "127.0.0.1",
                "--port", "0"));
        cmd.addAll(List.of(args));
        return start(cmd, Map.of());
    }

    /**
     * Starts any container command (a Python container, say) with {@code env} added to this
     * process's environment; waits for its {@code READY port=N} line.
     */
    public static ContainerProcess start(List<String> cmd, Map<String, String> env) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(cmd).redirectErrorStream(true);
        builder.environment().putAll(env);
        Process p = builder.start();
        CompletableFuture<Integer> ready = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (line.startsWith("READY port=")) {
                        ready.complete(Integer.parseInt(line.substring(11).trim()));
                    }
                }
                ready.completeExceptionally(new IOException("container exited before READY"));
            } catch (IOException e) {
                ready.completeExceptionally(e);
            }
        });
        reader.setDaemon(true);
        reader.start();
        try {
            return new ContainerProcess(p, ready.get(60, TimeUnit.SECONDS));
        } catch (Exception e) {
            p.destroyForcibly();
            throw e;
        }
    }

    public int port() {
        return port;
    }

    public String address() {
        return "127.0.0.1:" + port;
    }

    /** SIGSTOP: the container hangs, its sockets open, until {@link #resume()}. */
    public void suspend() throws Exception {
        signal("STOP");
    }

    /** SIGCONT: a suspended container carries on where it stopped. */
    public void resume() throws Exception {
        signal("CONT");
    }

    private void signal(String name) throws Exception {
        int rc = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start().waitFor();
        if (rc != 0) {
            throw new IllegalStateException("kill -" + name + " " + process.pid() + " exited with " + rc);
        }
    }

    /** SIGKILL: the container dies mid-batch with no chance to drain. */
    public void kill() throws InterruptedException {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws Exception {
        if (process.isAlive()) {
            signal("CONT"); // a suspended process would not act on SIGTERM
        }
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }
}
