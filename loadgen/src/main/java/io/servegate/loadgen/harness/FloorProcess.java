package io.servegate.loadgen.harness;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@link FloorServer} as a child process of the load generator, from the load generator's own
 * class path, so that its CPU time and heap are its own as the gateway's are.
 */
public final class FloorProcess implements AutoCloseable {

    private final Process process;
    private final int port;
    private final Path log;
    private final Thread shutdownHook;

    private FloorProcess(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
        this.shutdownHook = new Thread(process::destroyForcibly, "stop-floor");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Starts the floor on a free loopback port, calling the container at {@code container}, with
     * its output in {@code log}; returns once it listens.
     */
    public static FloorProcess start(List<String> jvmArgs, String container, String model, Path log,
            Duration timeout) throws IOException, InterruptedException {
        int port = GatewayProcess.freeLoopbackPort();
        List<String> cmd = new ArrayList<>();
        cmd.add(GatewayProcess.currentJava());
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(classPath());
        cmd.add(FloorServer.class.getName());
        cmd.add(Integer.toString(port));
        cmd.add(container);
        cmd.add(model);
        Path parent = log.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        FloorProcess floor = new FloorProcess(p, port, log);
        long until = System.nanoTime() + timeout.toNanos();
        while (!Files.readString(log).contains("listening on " + port)) {
            if (!p.isAlive() || System.nanoTime() > until) {
                floor.close();
                throw new IOException("the floor server did not start; its log " + log + ":\n" + Files.readString(log));
            }
            Thread.sleep(100);
        }
        return floor;
    }

    /**
     * The load generator's jar when run from it (it holds every dependency), else this JVM's class
     * path (from the build's classes folder, as in tests, the dependencies are elsewhere).
     */
    private static String classPath() {
        try {
            Path own = Path.of(FloorServer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (Files.isRegularFile(own)) {
                return own.toString();
            }
        } catch (URISyntaxException | RuntimeException e) {
            // below
        }
        return System.getProperty("java.class.path");
    }

    public int port() {
        return port;
    }

    public long pid() {
        return process.pid();
    }

    public Path log() {
        return log;
    }

    /** Stops the floor: SIGTERM, then SIGKILL after 5 s. */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
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
