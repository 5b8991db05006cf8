package io.servegate.gateway.containers;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.scheduler.Scheduler;

/**
 * The operating-system side of the {@code process} manager's replicas: starting a command on a
 * loopback port with the container environment, copying its output to the log, and stopping it
 * (SIGTERM to it and its descendants, SIGKILL after the grace period, repeated until it is gone).
 *
 * <p>A replica must not outlive the gateway, however the gateway ends (a {@code kill -9} runs no
 * shutdown hook). On Linux each command therefore runs under util-linux's
 * {@code setpriv --pdeathsig KILL}, which has the kernel kill it when its parent dies. The kernel
 * ties that signal to the parent <em>thread</em> that forked, so every process is started from one
 * thread that lives as long as the gateway: a pooled thread that ended would take its replicas
 * with it.
 */
final class ChildProcesses {

    private static final Logger LOG = LoggerFactory.getLogger(ChildProcesses.class);
    /** Child output, kept apart so operators can route or silence it. */
    private static final Logger CHILD_LOG = LoggerFactory.getLogger("io.servegate.container");

    /** Pause between SIGKILLs to a process that is still there. */
    private static final Backoff KILL_RETRY = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(5));

    private final Scheduler scheduler;
    private final Duration stopGracePeriod;
    private final ModelDirectories modelDirectories;
    /** Put before every command: the parent-death signal, or nothing where setpriv is missing. */
    private final List<String> parentDeathPrefix;
    private final ExecutorService launcher = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "replica-launcher");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param scheduler        times the SIGKILLs
     * @param stopGracePeriod  time between SIGTERM and SIGKILL
     * @param modelDirectories passed to every child as {@code SERVEGATE_MODEL_DIRS}
     */
    ChildProcesses(Scheduler scheduler, Duration stopGracePeriod, ModelDirectories modelDirectories) {
        this.scheduler = scheduler;
        this.stopGracePeriod = stopGracePeriod;
        this.modelDirectories = modelDirectories;
        this.parentDeathPrefix = parentDeathPrefix();
    }

    private static List<String> parentDeathPrefix() {
        Path setpriv = Path.of("/usr/bin/setpriv");
        if (System.getProperty("os.name", "").startsWith("Linux") && Files.isExecutable(setpriv)) {
            return List.of(setpriv.toString(), "--pdeathsig", "KILL", "--");
        }
        LOG.warn("{} not found: replicas of the process manager outlive a gateway that is killed "
                + "(SIGKILL, a crash); install util-linux", setpriv);
        return List.of();
    }

    /**
     * Starts {@code spec}'s command with its {@code env} plus {@code MODEL_NAME},
     * {@code MODEL_VERSION}, {@code HOST=127.0.0.1}, {@code PORT} and the model directories; its output goes to the log,
     * each line prefixed with {@code id}.
     */
    Process start(String id, DeploymentSpec spec, int port) throws IOException {
        if (!parentDeathPrefix.isEmpty()) {
            requireRunnable(spec.command().get(0)); // setpriv would start, then fail to run it
        }
        List<String> command = new ArrayList<>(parentDeathPrefix);
        command.addAll(spec.command());
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        Map<String, String> env = pb.environment();
        env.putAll(spec.env());
        env.put("MODEL_NAME", spec.modelName());
        env.put("MODEL_VERSION", spec.modelVersion());
        env.put("HOST", "127.0.0.1");
        env.put("PORT", Integer.toString(port));
        env.put(ModelDirectories.ENV, modelDirectories.envValue());
        Process p = startOnLauncher(pb);
        Thread pipe = new Thread(() -> pipe(id, p.getInputStream()), "container-" + id);
        pipe.setDaemon(true);
        pipe.start();
        return p;
    }

    /** Fails as {@link ProcessBuilder#start()} does for a program that is not there or not executable. */
    private static void requireRunnable(String program) throws IOException {
        if (program.contains("/")) {
            if (!Files.isExecutable(Path.of(program))) {
                throw new IOException("Cannot run program \"" + program + "\": not an executable file");
            }
            return;
        }
        String path = System.getenv().getOrDefault("PATH", "");
        for (String dir : path.split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
                return;
            }
        }
        throw new IOException("Cannot run program \"" + program + "\": not found on the PATH");
    }

    private Process startOnLauncher(ProcessBuilder pb) throws IOException {
        try {
            return launcher.submit(pb::start).get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while starting " + pb.command(), e);
        }
    }

    /**
     * SIGTERM now (to the process and its descendants), SIGKILL after the grace period, and again
     * with backoff until the process is gone: a signal that could not be sent (listing the
     * descendants needs descriptors, which a flood may have taken) is retried, never given up, so
     * a replica that failed its checks always exits and is restarted.
     */
    void terminate(Process p) {
        signal(p, false);
        scheduler.schedule(() -> killUntilGone(p, 0), stopGracePeriod.toNanos(), TimeUnit.NANOSECONDS);
    }

    private void killUntilGone(Process p, int attempt) {
        if (!p.isAlive()) {
            return;
        }
        if (attempt == 0) {
            LOG.warn("pid {} still running {} after SIGTERM; killing it", p.pid(), stopGracePeriod);
        }
        signal(p, true);
        scheduler.schedule(() -> killUntilGone(p, attempt + 1), KILL_RETRY.delay(attempt).toNanos(),
                TimeUnit.NANOSECONDS);
    }

    static void kill(Process p) {
        signal(p, true);
    }

    /** Signals the descendants (best effort: they may not be listable) and the process; false if that failed. */
    private static boolean signal(Process p, boolean force) {
        boolean sent = true;
        try {
            p.descendants().forEach(force ? ProcessHandle::destroyForcibly : ProcessHandle::destroy);
        } catch (RuntimeException e) {
            sent = false;
            LOG.warn("cannot list the descendants of pid {} to signal them: {}", p.pid(), e.toString());
        }
        try {
            if (force) {
                p.destroyForcibly();
            } else {
                p.destroy();
            }
        } catch (RuntimeException e) {
            sent = false;
            LOG.warn("cannot signal pid {}: {}", p.pid(), e.toString());
        }
        return sent;
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
