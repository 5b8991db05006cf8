package io.servegate.gateway.containers;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.scheduler.Scheduler;

/**
 * The operating-system side of the {@code process} manager's replicas: starting a command on a
 * loopback port with the container environment, copying its output to the log, and stopping it
 * (SIGTERM to it and its descendants, SIGKILL after the grace period).
 */
final class ChildProcesses {

    private static final Logger LOG = LoggerFactory.getLogger(ChildProcesses.class);
    /** Child output, kept apart so operators can route or silence it. */
    private static final Logger CHILD_LOG = LoggerFactory.getLogger("io.servegate.container");

    private final Scheduler scheduler;
    private final Duration stopGracePeriod;
    private final ModelDirectories modelDirectories;

    /**
     * @param scheduler        times the SIGKILLs
     * @param stopGracePeriod  time between SIGTERM and SIGKILL
     * @param modelDirectories passed to every child as {@code SERVEGATE_MODEL_DIRS}
     */
    ChildProcesses(Scheduler scheduler, Duration stopGracePeriod, ModelDirectories modelDirectories) {
        this.scheduler = scheduler;
        this.stopGracePeriod = stopGracePeriod;
        this.modelDirectories = modelDirectories;
    }

    /**
     * Starts {@code spec}'s command with its {@code env} plus {@code MODEL_NAME},
     * {@code MODEL_VERSION}, {@code HOST=127.0.0.1}, {@code PORT} and the model directories; its output goes to the log,
     * each line prefixed with {@code id}.
     */
    Process start(String id, DeploymentSpec spec, int port) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(spec.command()).redirectErrorStream(true);
        Map<String, String> env = pb.environment();
        env.putAll(spec.env());
        env.put("MODEL_NAME", spec.modelName());
        env.put("MODEL_VERSION", spec.modelVersion());
        env.put("HOST", "127.0.0.1");
        env.put("PORT", Integer.toString(port));
        env.put(ModelDirectories.ENV, modelDirectories.envValue());
        Process p = pb.start();
        Thread pipe = new Thread(() -> pipe(id, p.getInputStream()), "container-" + id);
        pipe.setDaemon(true);
        pipe.start();
        return p;
    }

    /** SIGTERM now (to the process and its descendants), SIGKILL after the grace period. */
    void terminate(Process p) {
        p.descendants().forEach(ProcessHandle::destroy);
        p.destroy();
        scheduler.schedule(() -> {
            if (p.isAlive()) {
                LOG.warn("pid {} still running {} after SIGTERM; killing it", p.pid(), stopGracePeriod);
                kill(p);
            }
        }, stopGracePeriod.toNanos(), TimeUnit.NANOSECONDS);
    }

    static void kill(Process p) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
    }

    /** A port free now; should another process take it first, the replica fails to bind and is restarted. */
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void pipe(String id, InputStream out) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(out, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                CHILD_LOG.info("[{}] {}", id, line);
            }
        } catch (IOException e) {
            LOG.debug("output of {} closed: {}", id, e.getMessage());
        }
    }
}
