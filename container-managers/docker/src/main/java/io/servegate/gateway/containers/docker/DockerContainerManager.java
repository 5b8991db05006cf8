package io.servegate.gateway.containers.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.exception.DockerException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.httpclient5.ApacheDockerHttpClient;
import io.servegate.gateway.containers.ContainerManager;
import io.servegate.gateway.containers.ContainerManagerException;
import io.servegate.gateway.containers.ContainerManagerException.Kind;
import io.servegate.gateway.containers.Deployment;
import io.servegate.gateway.containers.DeploymentSpec;
import io.servegate.gateway.containers.ReadinessProbe;
import io.servegate.gateway.containers.ReplicaStatus;
import io.servegate.gateway.containers.ReplicaStatus.State;
import io.servegate.gateway.containers.RestartPolicy;
import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.gateway.registry.Registry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Runs model-version replicas as Docker containers (docker-java over the engine's API).
 *
 * <p>Each replica is one container labelled {@code servegate.managed=true}, {@code servegate.owner},
 * {@code servegate.model}, {@code servegate.version} and {@code servegate.replica} (its registry id),
 * with the configured restart policy, the spec's CPU ({@code NanoCpus}) and memory limits and, when
 * {@code gpus > 0}, a GPU device request. Networking is either the host's network (the container
 * gets a free port as {@code PORT} and {@code HOST=127.0.0.1}) or a named Docker network with the
 * container's port published on 127.0.0.1 only. Either way the gateway reaches it at
 * {@code 127.0.0.1:port}, which stays the same across Docker's restarts.
 *
 * <p>A watcher polls every replica's container state every {@link DockerOptions#pollInterval()}: a replica
 * is registered only once the OIP readiness check passes, unregistered as soon as its container
 * is seen dead, restarted (by Docker, per the restart policy) or failing the check
 * {@link DockerOptions#failureThreshold()} times in a row, and registered again once it is ready
 * again. Docker restarts containers that exit; a replica that stays unready for
 * {@link DockerOptions#readinessTimeout()}, running or exiting again and again, is replaced by a new
 * container on a fresh port (unless the policy is {@code never}), as is one whose container someone
 * removed.
 *
 * <p>Deployments live in this manager's memory, so it owns its containers' whole life: on start it
 * removes containers left by an earlier manager with the same {@link DockerOptions#owner()} (and their
 * registry entries) instead of adopting containers whose spec it no longer knows, and {@link #close()}
 * stops and removes its containers. Every Docker call runs on {@link Schedulers#boundedElastic()}.
 */
public final class DockerContainerManager implements ContainerManager {

    private static final Logger log = LoggerFactory.getLogger(DockerContainerManager.class);

    private final DockerClient docker;
    private final ReplicaContainers containers;
    private final Registry registry;
    private final ReadinessProbe probe;
    private final DockerOptions options;
    private final Object lock = new Object();
    /** Guarded by {@link #lock}, as is every {@link DockerReplica}'s mutable state. */
    private final Map<String, DeployedVersion> deployments = new LinkedHashMap<>();
    private final Disposable watcher;
    private final boolean ownsClient;

    /**
     * Cleans up what an earlier manager with the same owner left and starts watching. Blocks for
     * the clean-up: call it off any event loop (it is meant for start-up).
     */
    public DockerContainerManager(DockerClient docker, Registry registry, ReadinessProbe probe, DockerOptions options,
            Scheduler timer) {
        this(docker, false, registry, probe, options, timer);
    }

    /** Like the constructor, with a client for the engine at {@code host} that {@link #close()} closes. */
    public static DockerContainerManager start(String host, Registry registry, ReadinessProbe probe,
            DockerOptions options, Scheduler timer) {
        DockerClient docker = connect(host);
        try {
            return new DockerContainerManager(docker, true, registry, probe, options, timer);
        } catch (RuntimeException e) {
            try {
                docker.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new IllegalStateException("cannot use the Docker engine at " + host + ": " + e.getMessage(), e);
        }
    }

    private DockerContainerManager(DockerClient docker, boolean ownsClient, Registry registry, ReadinessProbe probe,
            DockerOptions options, Scheduler timer) {
        this.docker = docker;
        this.containers = new ReplicaContainers(docker, options, new PortReservations());
        this.ownsClient = ownsClient;
        this.registry = registry;
        this.probe = probe;
        this.options = options;
        LeftoverContainers.remove(docker, registry, options.owner());
        this.watcher = Flux.interval(options.pollInterval(), timer)
                .onBackpressureDrop()
                .concatMap(tick -> Mono.fromRunnable(this::pollOnce).subscribeOn(Schedulers.boundedElastic())
                        .onErrorResume(e -> {
                            log.warn("docker watcher: {}", e.toString());
                            return Mono.empty();
                        }), 1)
                .subscribe();
    }

    /** @return a client for the engine at {@code host} (e.g. {@code unix:///var/run/docker.sock}, {@code tcp://h:2375}) */
    public static DockerClient connect(String host) {
        DockerClientConfig config = DefaultDockerClientConfig.createDefaultConfigBuilder().withDockerHost(host).build();
        return DockerClientImpl.getInstance(config, new ApacheDockerHttpClient.Builder()
                .dockerHost(config.getDockerHost())
                .sslConfig(config.getSSLConfig())
                .connectionTimeout(Duration.ofSeconds(5))
                .responseTimeout(Duration.ofMinutes(2))
                .build());
    }

    @Override
    public String kind() {
        return "docker";
    }

    @Override
    public Mono<Deployment> deploy(DeploymentSpec spec) {
        return blocking(() -> {
            if (spec.image() == null || spec.image().isBlank()) {
                throw new ContainerManagerException(Kind.INVALID, "the docker manager needs an image");
            }
            if (registry.snapshot().model(spec.modelName(), spec.modelVersion()).isEmpty()) {
                throw new ContainerManagerException(Kind.NOT_FOUND, "model " + spec.modelName() + ":"
                        + spec.modelVersion() + " is not registered; add it first");
            }
            DeployedVersion dep;
            synchronized (lock) {
                String key = key(spec.modelName(), spec.modelVersion());
                if (deployments.containsKey(key)) {
                    throw new ContainerManagerException(Kind.CONFLICT, "model " + key + " is already deployed");
                }
                dep = new DeployedVersion(spec);
                deployments.put(key, dep);
            }
            try {
                scaleTo(dep, spec.replicas());
            } catch (RuntimeException e) {
                synchronized (lock) {
                    deployments.remove(key(spec.modelName(), spec.modelVersion()));
                }
                List<DockerReplica> started;
                synchronized (lock) {
                    started = new ArrayList<>(dep.replicas);
                }
                stopAll(started);
                throw e;
            }
            return snapshot(dep);
        });
    }

    @Override
    public Mono<Deployment> setReplicas(String modelName, String modelVersion, int replicas) {
        return blocking(() -> {
            if (replicas < 0) {
                throw new ContainerManagerException(Kind.INVALID, "replicas must be >= 0, got " + replicas);
            }
            DeployedVersion dep = require(modelName, modelVersion);
            scaleTo(dep, replicas);
            return snapshot(dep);
        });
    }

    @Override
    public Mono<List<Deployment>> list() {
        return Mono.fromSupplier(() -> {
            synchronized (lock) {
                return deployments.values().stream().map(this::snapshot).toList();
            }
        });
    }

    @Override
    public Mono<Void> remove(String modelName, String modelVersion) {
        return blocking(() -> {
            DeployedVersion dep;
            synchronized (lock) {
                dep = deployments.remove(key(modelName, modelVersion));
            }
            if (dep != null) {
                List<DockerReplica> all;
                synchronized (lock) {
                    all = new ArrayList<>(dep.replicas);
                    dep.replicas.clear();
                }
                stopAll(all);
            }
            return null;
        }).then();
    }

    /** Stops watching, then stops and removes every container this manager started. */
    @Override
    public void close() {
        watcher.dispose();
        List<DockerReplica> all = new ArrayList<>();
        synchronized (lock) {
            deployments.values().forEach(d -> all.addAll(d.replicas));
            deployments.clear();
        }
        stopAll(all);
        if (ownsClient) {
            try {
                docker.close();
            } catch (IOException e) {
                log.warn("closing the docker client: {}", e.getMessage());
            }
        }
    }

    private DeployedVersion require(String modelName, String modelVersion) {
        synchronized (lock) {
            DeployedVersion dep = deployments.get(key(modelName, modelVersion));
            if (dep == null) {
                throw new ContainerManagerException(Kind.NOT_FOUND, "model " + key(modelName, modelVersion)
                        + " is not deployed by the docker manager");
            }
            return dep;
        }
    }

    /** Starts or stops containers until {@code dep} has {@code n}; stops unready replicas first, newest first. */
    private void scaleTo(DeployedVersion dep, int n) {
        synchronized (dep) {   // one scaling at a time per deployment (admin call or the watcher's replacement)
            scaleLocked(dep, n);
        }
    }

    private void scaleLocked(DeployedVersion dep, int n) {
        List<DockerReplica> surplus = new ArrayList<>();
        int missing;
        synchronized (lock) {
            dep.desired = n;
            // the ones to stop go last: unready before ready, then newest
            dep.replicas.sort(Comparator.comparing((DockerReplica r) -> r.state != State.READY)
                    .thenComparingInt(r -> r.seq));
            while (dep.replicas.size() > n) {
                surplus.add(dep.replicas.remove(dep.replicas.size() - 1));
            }
            dep.replicas.sort(Comparator.comparingInt(r -> r.seq));
            missing = n - dep.replicas.size();
        }
        stopAll(surplus);
        for (int i = 0; i < missing; i++) {
            DockerReplica r = start(dep);
            boolean removed;
            synchronized (lock) {
                removed = deployments.get(key(dep.spec.modelName(), dep.spec.modelVersion())) != dep;
                if (!removed) {
                    dep.replicas.add(r);
                }
            }
            if (removed) {   // removed while we were starting it
                stopAll(List.of(r));
                return;
            }
        }
    }

    /** Creates and starts one container; the watcher registers it once it is ready. */
    private DockerReplica start(DeployedVersion dep) {
        DeploymentSpec spec = dep.spec;
        int seq;
        synchronized (lock) {
            seq = dep.nextSeq++;
        }
        String name = "servegate-" + spec.modelName() + "-" + spec.modelVersion() + "-" + seq + "-"
                + UUID.randomUUID().toString().substring(0, 6);
        ReplicaContainers.Started started = containers.start(spec, name);
        return new DockerReplica(dep, seq, name, started.containerId(), started.port());
    }

    /** Unregisters, stops (letting each container drain for {@code stopTimeout}) and removes, in parallel. */
    private void stopAll(List<DockerReplica> replicas) {
        Flux.fromIterable(replicas)
                .flatMap(r -> Mono.fromRunnable(() -> stop(r)).subscribeOn(Schedulers.boundedElastic()))
                .then()
                .block();
    }

    private void stop(DockerReplica r) {
        synchronized (lock) {
            r.stopping = true;
            r.state = State.STOPPED;
        }
        unregister(r);
        containers.remove(r.containerId, r.name, r.port);
    }

    /** One watcher round: inspects every replica's container and moves it through its states. */
    private void pollOnce() {
        List<DockerReplica> all = new ArrayList<>();
        synchronized (lock) {
            deployments.values().forEach(d -> all.addAll(d.replicas));
        }
        Flux.fromIterable(all)
                .flatMap(r -> Mono.fromRunnable(() -> poll(r)).subscribeOn(Schedulers.boundedElastic()))
                .then()
                .block();
    }

    private void poll(DockerReplica r) {
        InspectContainerResponse c;
        try {
            c = containers.inspect(r.containerId);
        } catch (NotFoundException e) {
            replace(r, "its container was removed outside the gateway", false);
            return;
        } catch (DockerException e) {
            log.warn("inspecting {}: {}", r.name, e.getMessage());
            return;
        }
        InspectContainerResponse.ContainerState s = c.getState();
        // Docker flags a container it will restart as Restarting as soon as it exits
        boolean restarting = Boolean.TRUE.equals(s.getRestarting());
        boolean running = Boolean.TRUE.equals(s.getRunning()) && !restarting;
        State before;
        synchronized (lock) {
            if (r.stopping) {
                return;   // being stopped by scale-down or remove
            }
            r.restarts = c.getRestartCount() == null ? 0 : c.getRestartCount();
            before = r.state;
            if (!running) {
                r.state = restarting ? State.RESTARTING : State.STOPPED;
            } else if (r.startedAt != null && !r.startedAt.equals(s.getStartedAt())) {
                r.state = State.STARTING;   // Docker restarted it between two polls: probe it afresh
            }
            if (before == State.READY && r.state != State.READY) {
                r.unreadySince = System.nanoTime();
            }
            r.startedAt = running ? s.getStartedAt() : r.startedAt;
        }
        if (before == State.READY && r.state != State.READY) {
            log.info("replica {} of {}:{} went down ({}, exit code {}); unregistered", r.name,
                    r.dep.spec.modelName(), r.dep.spec.modelVersion(), s.getStatus(), s.getExitCodeLong());
            unregister(r);
        }
        if (!running) {
            if (restarting && stuck(r)) {
                replace(r, "its container kept exiting for " + options.readinessTimeout(), true);
            }
            return;
        }
        boolean ready = Boolean.TRUE.equals(probe.check(r.address, r.dep.spec.modelName(), r.dep.spec.modelVersion())
                .block(options.checkTimeout().multipliedBy(3)));
        synchronized (lock) {
            if (r.stopping) {
                return;
            }
            if (ready) {
                r.failures = 0;
                if (r.state != State.READY) {
                    register(r);
                }
            } else if (r.state == State.READY && ++r.failures >= options.failureThreshold()) {
                r.state = State.UNHEALTHY;
                r.unreadySince = System.nanoTime();
                log.info("replica {} failed {} readiness checks; unregistered", r.name, r.failures);
                unregister(r);
            }
        }
        if (!ready && stuck(r)) {
            replace(r, "it was not ready for " + options.readinessTimeout(), true);
        }
    }

    /**
     * Whether a replica has been unready for the readiness timeout and the restart policy lets the
     * manager act. A restart in place would keep its host port, which may be what keeps it
     * unready: in the host's network a process that cannot bind {@code PORT} because something
     * else took it after the port was reserved exits on every start.
     */
    private boolean stuck(DockerReplica r) {
        synchronized (lock) {
            return r.state != State.READY && options.restartPolicy() != RestartPolicy.NEVER
                    && System.nanoTime() - r.unreadySince > options.readinessTimeout().toNanos();
        }
    }

    /** Called with {@link #lock} held, so a concurrent stop cannot interleave its unregistering. */
    private void register(DockerReplica r) {
        try {
            registry.addReplica(new ContainerReplica(r.name, r.dep.spec.modelName(), r.dep.spec.modelVersion(),
                    r.address)).block(Duration.ofSeconds(10));
            r.state = State.READY;
            log.info("replica {} of {}:{} is ready at {}; registered", r.name, r.dep.spec.modelName(),
                    r.dep.spec.modelVersion(), r.address);
        } catch (RuntimeException e) {
            log.warn("registering replica {}: {}", r.name, e.getMessage());
        }
    }

    private void unregister(DockerReplica r) {
        try {
            registry.removeReplica(r.name).block(Duration.ofSeconds(10));
        } catch (RuntimeException e) {
            log.warn("unregistering replica {}: {}", r.name, e.getMessage());
        }
    }

    /**
     * Replaces a replica with a new container on a fresh port; {@code remove}: its container is
     * still there, to be stopped and removed first.
     */
    private void replace(DockerReplica r, String why, boolean remove) {
        boolean replace;
        synchronized (lock) {
            replace = !r.stopping && r.dep.replicas.remove(r);
            r.stopping = true;
            r.state = State.STOPPED;
        }
        if (replace) {
            log.info("replica {} of {}:{}: {}; starting a replacement on a fresh port", r.name,
                    r.dep.spec.modelName(), r.dep.spec.modelVersion(), why);
            unregister(r);
            if (remove) {
                containers.remove(r.containerId, r.name, r.port);
            } else {
                containers.forget(r.port);
            }
            scaleTo(r.dep, r.dep.desired);
        }
    }

    private Deployment snapshot(DeployedVersion dep) {
        synchronized (lock) {
            return new Deployment(dep.spec.modelName(), dep.spec.modelVersion(), dep.desired,
                    dep.replicas.stream().map(r -> new ReplicaStatus(r.name, r.address, r.state, r.restarts)).toList());
        }
    }

    private static <T> Mono<T> blocking(Callable<T> call) {
        return Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic())
                .onErrorMap(DockerException.class, e -> new ContainerManagerException(Kind.PLATFORM,
                        "docker: " + e.getMessage(), e));
    }

    private static String key(String model, String version) {
        return model + ":" + version;
    }
}
