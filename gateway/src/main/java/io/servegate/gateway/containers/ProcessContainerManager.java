package io.servegate.gateway.containers;

import io.servegate.gateway.registry.Registry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The embedded default manager: every replica is a local child process listening on a free loopback
 * port. The command ({@link DeploymentSpec#command()}) is run as given, with {@code PORT},
 * {@code HOST=127.0.0.1}, {@code MODEL_NAME}, {@code MODEL_VERSION} and the operator's model
 * directories ({@link ModelDirectories#ENV}) added to {@link DeploymentSpec#env()} (which the SDK
 * containers read); its output goes to this log, each line prefixed with the replica id.
 *
 * <p>A replica ({@code <model>-<version>-p<N>}) is registered only once the OIP readiness check
 * passes, then checked every probe interval. When its process exits, fails {@code livenessFailures}
 * checks in a row, is not ready within the readiness timeout, or (at once) serves another model,
 * version or input type than registered, it is unregistered (a live process is stopped), the check's
 * answer kept as its {@code detail}, and the restart policy decides whether it is started again, after
 * an exponential backoff that resets once it is ready. Stopping means SIGTERM (an SDK container drains
 * its in-flight batches), then SIGKILL after the grace period, repeated until the process is gone, so
 * a replica that is alive but unreachable is always replaced; a start that fails in any way is a
 * failed exit, retried with the backoff. {@link #close()} stops every child and waits for them.
 * Resource limits cannot be enforced on plain processes and are refused.
 */
public final class ProcessContainerManager implements ContainerManager {

    private static final Logger LOG = LoggerFactory.getLogger(ProcessContainerManager.class);

    /**
     * How the manager watches and restarts its processes.
     *
     * @param readinessTimeout a started replica not ready by then is stopped and counted as failed
     * @param probeInterval    pause between liveness checks of a ready replica
     * @param livenessFailures failed checks in a row that make a ready replica unhealthy
     * @param restartPolicy    when a stopped replica is started again
     * @param backoff          delay before each restart
     * @param stopGracePeriod  time between SIGTERM and SIGKILL
     * @param modelDirectories where the containers may load model files from, passed to each
     */
    public record Settings(Duration readinessTimeout, Duration probeInterval, int livenessFailures,
            RestartPolicy restartPolicy, Backoff backoff, Duration stopGracePeriod, ModelDirectories modelDirectories) {

        public Settings {
            if (livenessFailures < 1) {
                throw new IllegalArgumentException("livenessFailures must be at least 1, got " + livenessFailures);
            }
        }
    }

    private final Registry registry;
    private final ReadinessProbe probe;
    private final Settings settings;
    private final Scheduler scheduler;
    private final ChildProcesses children;
    /** Guarded by {@code this}, as is all replica state. */
    private final Map<String, Dep> deployments = new LinkedHashMap<>();
    private boolean closed;

    /**
     * @param registry  where ready replicas are registered
     * @param probe     the readiness (and liveness) check
     * @param settings  timeouts, restart policy and backoff
     * @param scheduler times checks, restarts and SIGKILLs, and starts processes (which blocks briefly)
     */
    public ProcessContainerManager(Registry registry, ReadinessProbe probe, Settings settings, Scheduler scheduler) {
        this.registry = registry;
        this.probe = probe;
        this.settings = settings;
        this.scheduler = scheduler;
        this.children = new ChildProcesses(scheduler, settings.stopGracePeriod(), settings.modelDirectories());
    }

    @Override
    public String kind() {
        return "process";
    }

    @Override
    public Mono<Deployment> deploy(DeploymentSpec spec) {
        return Mono.fromCallable(() -> {
            validate(spec);
            synchronized (this) {
                if (closed) {
                    throw new ContainerManagerException(ContainerManagerException.Kind.PLATFORM, "manager is closed");
                }
                String key = key(spec.modelName(), spec.modelVersion());
                if (registry.snapshot().model(spec.modelName(), spec.modelVersion()).isEmpty()) {
                    throw new ContainerManagerException(ContainerManagerException.Kind.NOT_FOUND,
                            "model version '" + key + "' is not registered");
                }
                if (deployments.containsKey(key)) {
                    throw new ContainerManagerException(ContainerManagerException.Kind.CONFLICT,
                            "model version '" + key + "' is already deployed; use set_num_replicas to scale it");
                }
                Dep dep = new Dep(spec);
                deployments.put(key, dep);
                try {
                    // a command that cannot start at all is refused, not retried
                    for (int i = 0; i < dep.desired; i++) {
                        Replica r = new Replica(dep, i);
                        dep.replicas.add(r);
                        launch(r);
                    }
                } catch (IOException e) {
                    deployments.remove(key);
                    List.copyOf(dep.replicas).forEach(this::stop);
                    throw new ContainerManagerException(ContainerManagerException.Kind.INVALID,
                            "cannot run " + spec.command() + ": " + e.getMessage(), e);
                }
                return dep.describe();
            }
        }).subscribeOn(scheduler);
    }

    private static void validate(DeploymentSpec spec) {
        if (spec.command().isEmpty()) {
            throw invalid("the process manager runs a command: give 'command' (program and arguments)"
                    + (spec.image() != null ? "; images need the docker or kubernetes manager" : ""));
        }
        if (!spec.addresses().isEmpty()) {
            throw invalid("the process manager starts its own replicas; 'addresses' are for the external manager");
        }
        if (!spec.resources().equals(DeploymentSpec.Resources.NONE)) {
            throw invalid("the process manager cannot enforce resource limits; use the docker or kubernetes manager");
        }
    }

    private static ContainerManagerException invalid(String message) {
        return new ContainerManagerException(ContainerManagerException.Kind.INVALID, message);
    }

    @Override
    public Mono<Deployment> setReplicas(String modelName, String modelVersion, int replicas) {
        return Mono.fromCallable(() -> {
            if (replicas < 0) {
                throw invalid("replicas must be >= 0, got " + replicas);
            }
            synchronized (this) {
                Dep dep = deployments.get(key(modelName, modelVersion));
                if (dep == null) {
                    throw new ContainerManagerException(ContainerManagerException.Kind.NOT_FOUND,
                            "model version '" + key(modelName, modelVersion) + "' is not deployed");
                }
                dep.desired = replicas;
                reconcile(dep);
                return dep.describe();
            }
        }).subscribeOn(scheduler);
    }

    @Override
    public synchronized Mono<List<Deployment>> list() {
        return Mono.just(deployments.values().stream().map(Dep::describe).toList());
    }

    /** Completes once every process of the version has exited and its replicas are unregistered. */
    @Override
    public Mono<Void> remove(String modelName, String modelVersion) {
        return Mono.defer(() -> {
            List<CompletableFuture<Void>> done = new ArrayList<>();
            synchronized (this) {
                Dep dep = deployments.remove(key(modelName, modelVersion));
                if (dep == null) {
                    return Mono.empty();
                }
                for (Replica r : List.copyOf(dep.replicas)) {
                    stop(r);
                    done.add(r.stopped);
                }
            }
            return Mono.fromFuture(CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)));
        });
    }

    /** @return the live process of a replica, for operators and tests; empty while it has none */
    public synchronized Optional<ProcessHandle> process(String replicaId) {
        return deployments.values().stream().flatMap(d -> d.replicas.stream())
                .filter(r -> r.id.equals(replicaId) && r.process != null)
                .map(r -> r.process.toHandle()).findFirst();
    }

    /** Stops every child: SIGTERM, then SIGKILL to those still running after the grace period. */
    @Override
    public void close() {
        List<Replica> all = new ArrayList<>();
        Map<Replica, Process> processes = new LinkedHashMap<>();
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            deployments.values().forEach(d -> all.addAll(d.replicas));
            deployments.clear();
            all.stream().filter(r -> r.process != null).forEach(r -> processes.put(r, r.process));
            all.forEach(this::stop);
        }
        long deadline = System.nanoTime() + settings.stopGracePeriod().toNanos();
        for (Replica r : all) {
            try {
                r.stopped.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (Exception e) {
                Process p = processes.get(r);
                if (p != null && p.isAlive()) {
                    LOG.warn("replica {} did not stop within {}; killing it", r.id, settings.stopGracePeriod());
                    ChildProcesses.kill(p);
                }
            }
        }
        for (Replica r : all) {
            try {
                r.stopped.get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                LOG.warn("replica {} did not stop: {}", r.id, e.toString());
            }
        }
    }

    /** Starts or stops replicas until the deployment has the desired number that are not stopping. */
    private void reconcile(Dep dep) {
        List<Replica> active = dep.replicas.stream().filter(r -> !r.stopping).toList();
        for (int n = active.size(); n < dep.desired; n++) {
            Replica r = new Replica(dep, dep.freeIndex());
            dep.replicas.add(r);
            start(r);
        }
        if (active.size() > dep.desired) {
            // the not-yet-ready go first, then the highest ids
            active.stream().sorted(Comparator.comparing((Replica r) -> r.state == ReplicaStatus.State.READY)
                            .thenComparing(r -> -r.index))
                    .limit(active.size() - dep.desired).forEach(this::stop);
        }
    }

    /** Starts a replica's process; any failure (out of descriptors, an unchecked one too) is a failed exit. */
    private void start(Replica r) {
        try {
            launch(r);
        } catch (IOException | RuntimeException e) {
            LOG.warn("replica {} could not start: {}", r.id, e.toString());
            r.generation++;
            exited(r, r.generation, -1);
        }
    }

    private void launch(Replica r) throws IOException {
        DeploymentSpec spec = r.dep.spec;
        int port = ChildProcesses.freePort();
        Process p = children.start(r.id, spec, port);
        int gen = ++r.generation;
        r.process = p;
        r.port = port;
        r.state = ReplicaStatus.State.STARTING;
        r.failedCheck = false;
        LOG.info("replica {} started: pid {}, port {}", r.id, p.pid(), port);
        p.onExit().thenAccept(x -> {
            synchronized (this) {
                exited(r, gen, x.exitValue());
            }
        });
        Disposable wait = probe.await(r.address(), spec.modelName(), spec.modelVersion(), r.registration.inputType(),
                settings.readinessTimeout()).subscribe(result -> readiness(r, gen, result));
        if (r.generation == gen && r.state == ReplicaStatus.State.STARTING) {
            r.watch = wait;
        }
    }

    /** A mismatch with the registration comes as soon as the container answers; anything else at the timeout. */
    private synchronized void readiness(Replica r, int gen, ReadinessProbe.Result result) {
        if (r.generation != gen || r.stopping || r.state != ReplicaStatus.State.STARTING) {
            return;
        }
        r.detail = result.ready() ? null : result.detail();
        if (r.detail != null) {
            LOG.warn("replica {} is not ready: {}; stopping it", r.id, result.detail());
            r.failedCheck = true;
            r.state = ReplicaStatus.State.UNHEALTHY;
            children.terminate(r.process);
            return;
        }
        LOG.info("replica {} is ready at {}", r.id, r.address());
        r.state = ReplicaStatus.State.READY;
        r.failuresInARow = 0;
        r.registration.register(r.address());
        int[] failedChecks = {0};
        r.watch = Flux.interval(settings.probeInterval(), settings.probeInterval(), scheduler)
                .onBackpressureDrop()
                .concatMap(t -> probe.inspect(r.address(), r.dep.spec.modelName(), r.dep.spec.modelVersion(), null), 1)
                .subscribe(check -> {
                    failedChecks[0] = check.ready() ? 0 : failedChecks[0] + 1;
                    r.detail = check.ready() ? null : check.detail();
                    if (failedChecks[0] >= settings.livenessFailures()) {
                        unhealthy(r, gen);
                    }
                });
    }

    private synchronized void unhealthy(Replica r, int gen) {
        if (r.generation != gen || r.stopping || r.state != ReplicaStatus.State.READY) {
            return;
        }
        LOG.warn("replica {} failed {} liveness checks in a row, the last: {}; unregistering and stopping it", r.id,
                settings.livenessFailures(), r.detail);
        r.failedCheck = true;
        r.state = ReplicaStatus.State.UNHEALTHY;
        dispose(r);
        r.registration.unregister();
        children.terminate(r.process);
    }

    /** The process of generation {@code gen} exited (or could not start, with {@code code} -1). */
    private void exited(Replica r, int gen, int code) {
        if (r.generation != gen) {
            return;
        }
        dispose(r);
        r.registration.unregister();
        r.process = null;
        if (r.stopping) {
            LOG.info("replica {} stopped (exit status {})", r.id, code);
            finish(r);
            return;
        }
        boolean failed = code != 0 || r.failedCheck;
        if (!settings.restartPolicy().restarts(failed)) {
            LOG.warn("replica {} exited with status {}; restart policy {} leaves it stopped", r.id, code,
                    settings.restartPolicy().configName());
            r.state = ReplicaStatus.State.STOPPED;
            return;
        }
        Duration delay = settings.backoff().delay(r.failuresInARow++);
        LOG.warn("replica {} exited with status {}; restarting it in {}", r.id, code, delay);
        r.state = ReplicaStatus.State.RESTARTING;
        r.watch = scheduler.schedule(() -> {
            synchronized (this) {
                if (r.generation == gen && !r.stopping) {
                    r.restarts++;
                    start(r);
                }
            }
        }, delay.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Unregisters a replica at once and stops its process, if any; it leaves its deployment once gone. */
    private void stop(Replica r) {
        if (r.stopping) {
            return;
        }
        r.stopping = true;
        r.state = ReplicaStatus.State.STOPPED;
        dispose(r);
        r.registration.unregister();
        if (r.process != null) {
            children.terminate(r.process);
        } else {
            r.generation++; // a scheduled restart is void
            finish(r);
        }
    }

    private void finish(Replica r) {
        r.state = ReplicaStatus.State.STOPPED;
        r.dep.replicas.remove(r);
        r.registration.settled().whenComplete((x, e) -> r.stopped.complete(null));
    }

    private static void dispose(Replica r) {
        if (r.watch != null) {
            r.watch.dispose();
            r.watch = null;
        }
    }

    private static String key(String model, String version) {
        return model + ":" + version;
    }

    /** One deployed model version. */
    private final class Dep {
        final DeploymentSpec spec;
        final List<Replica> replicas = new ArrayList<>();
        int desired;

        Dep(DeploymentSpec spec) {
            this.spec = spec;
            this.desired = spec.replicas();
        }

        /** The lowest index no replica uses, draining ones included, so ids stay short and unique. */
        int freeIndex() {
            return IntStream.iterate(0, i -> i + 1).filter(i -> replicas.stream().noneMatch(r -> r.index == i))
                    .findFirst().orElseThrow();
        }

        Deployment describe() {
            return new Deployment(spec.modelName(), spec.modelVersion(), desired, replicas.stream()
                    .sorted(Comparator.comparingInt(r -> r.index))
                    .map(r -> new ReplicaStatus(r.id, r.process == null ? null : r.address(), r.state, r.restarts,
                            r.detail))
                    .toList());
        }
    }

    /** One replica slot: its current process, if any, and its history. */
    private final class Replica {
        final Dep dep;
        final int index;
        final String id;
        final ReplicaRegistration registration;
        final CompletableFuture<Void> stopped = new CompletableFuture<>();
        /** Bumped by every start, so callbacks about an earlier process are ignored. */
        int generation;
        Process process;
        int port;
        ReplicaStatus.State state = ReplicaStatus.State.STARTING;
        int restarts;
        int failuresInARow;
        boolean failedCheck;
        boolean stopping;
        /** Why it is not ready (the last check's answer), kept across restarts until it is; null when nothing. */
        volatile String detail;
        /** The readiness wait, liveness checks or restart timer under way. */
        Disposable watch;

        Replica(Dep dep, int index) {
            this.dep = dep;
            this.index = index;
            this.id = dep.spec.modelName() + "-" + dep.spec.modelVersion() + "-p" + index;
            this.registration = new ReplicaRegistration(registry, id, dep.spec.modelName(), dep.spec.modelVersion());
        }

        String address() {
            return "127.0.0.1:" + port;
        }
    }
}
