package io.servegate.gateway.containers;

import io.servegate.gateway.registry.Registry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Containers someone else runs, given by address ({@link DeploymentSpec#addresses()}): this
 * manager starts and stops nothing. Each address becomes a replica {@code <model>-<version>-e<N>}
 * that is checked every probe interval from the start: it is registered once the OIP readiness
 * check passes, unregistered after {@code failures} failed checks in a row, and registered again
 * when it recovers. It cannot scale what it does not run, so {@link #setReplicas} is refused.
 * {@link #close()} stops the checks and leaves the registrations (the containers keep running).
 */
public final class ExternalContainerManager implements ContainerManager {

    private static final Logger LOG = LoggerFactory.getLogger(ExternalContainerManager.class);

    private final Registry registry;
    private final ReadinessProbe probe;
    private final Duration readinessTimeout;
    private final Duration probeInterval;
    private final int failures;
    private final Scheduler scheduler;
    /** Guarded by {@code this}, as is all replica state. */
    private final Map<String, List<Replica>> deployments = new LinkedHashMap<>();

    /**
     * @param registry         where ready replicas are registered
     * @param probe            the readiness check
     * @param readinessTimeout a replica not ready by then is reported {@code UNHEALTHY} (and still checked)
     * @param probeInterval    pause between checks
     * @param failures         failed checks in a row that unregister a ready replica
     * @param scheduler        times the checks
     */
    public ExternalContainerManager(Registry registry, ReadinessProbe probe, Duration readinessTimeout,
            Duration probeInterval, int failures, Scheduler scheduler) {
        if (failures < 1) {
            throw new IllegalArgumentException("failures must be at least 1, got " + failures);
        }
        this.registry = registry;
        this.probe = probe;
        this.readinessTimeout = readinessTimeout;
        this.probeInterval = probeInterval;
        this.failures = failures;
        this.scheduler = scheduler;
    }

    @Override
    public String kind() {
        return "external";
    }

    @Override
    public Mono<Deployment> deploy(DeploymentSpec spec) {
        return Mono.fromCallable(() -> {
            if (spec.addresses().isEmpty() || !spec.command().isEmpty() || spec.image() != null) {
                throw invalid("the external manager runs nothing: give only 'addresses' (host:port of "
                        + "containers you run)");
            }
            if (spec.replicas() != spec.addresses().size()) {
                throw invalid("the external manager has one replica per address: " + spec.addresses().size()
                        + " addresses, but " + spec.replicas() + " replicas asked for");
            }
            String key = spec.modelName() + ":" + spec.modelVersion();
            synchronized (this) {
                if (registry.snapshot().model(spec.modelName(), spec.modelVersion()).isEmpty()) {
                    throw new ContainerManagerException(ContainerManagerException.Kind.NOT_FOUND,
                            "model version '" + key + "' is not registered");
                }
                if (deployments.containsKey(key)) {
                    throw new ContainerManagerException(ContainerManagerException.Kind.CONFLICT,
                            "model version '" + key + "' is already deployed");
                }
                List<Replica> replicas = new ArrayList<>();
                for (int i = 0; i < spec.addresses().size(); i++) {
                    replicas.add(new Replica(spec, i));
                }
                deployments.put(key, replicas);
                replicas.forEach(Replica::watch);
                return describe(spec.modelName(), spec.modelVersion(), replicas);
            }
        });
    }

    @Override
    public Mono<Deployment> setReplicas(String modelName, String modelVersion, int replicas) {
        return Mono.error(() -> invalid("the external manager does not run containers, so it cannot scale '"
                + modelName + ":" + modelVersion + "': start or stop them yourself and deploy the addresses again, "
                + "or use the process, docker or kubernetes manager"));
    }

    @Override
    public synchronized Mono<List<Deployment>> list() {
        List<Deployment> out = new ArrayList<>();
        deployments.forEach((key, replicas) -> {
            int colon = key.indexOf(':');
            out.add(describe(key.substring(0, colon), key.substring(colon + 1), replicas));
        });
        return Mono.just(out);
    }

    /** Stops checking the addresses and unregisters them; completes once the registry has applied that. */
    @Override
    public Mono<Void> remove(String modelName, String modelVersion) {
        return Mono.defer(() -> {
            List<Replica> replicas;
            synchronized (this) {
                replicas = deployments.remove(modelName + ":" + modelVersion);
                if (replicas == null) {
                    return Mono.empty();
                }
                replicas.forEach(r -> {
                    r.checks.dispose();
                    r.state = ReplicaStatus.State.STOPPED;
                    r.registration.unregister();
                });
            }
            return Mono.fromFuture(CompletableFuture.allOf(replicas.stream().map(r -> r.registration.settled())
                    .toArray(CompletableFuture[]::new)));
        });
    }

    @Override
    public synchronized void close() {
        deployments.values().forEach(rs -> rs.forEach(r -> r.checks.dispose()));
        deployments.clear();
    }

    private static Deployment describe(String model, String version, List<Replica> replicas) {
        return new Deployment(model, version, replicas.size(),
                replicas.stream().map(r -> new ReplicaStatus(r.id, r.address, r.state, 0, r.detail)).toList());
    }

    private static ContainerManagerException invalid(String message) {
        return new ContainerManagerException(ContainerManagerException.Kind.INVALID, message);
    }

    /** One external address and its checks. */
    private final class Replica {
        final String id;
        final String address;
        final String model;
        final String version;
        final ReplicaRegistration registration;
        ReplicaStatus.State state = ReplicaStatus.State.STARTING;
        /** The last failed check's call and answer; null after a check passed. */
        String detail;
        int failedInARow;
        Disposable checks;

        Replica(DeploymentSpec spec, int index) {
            this.model = spec.modelName();
            this.version = spec.modelVersion();
            this.id = model + "-" + version + "-e" + index;
            this.address = spec.addresses().get(index);
            this.registration = new ReplicaRegistration(registry, id, model, version);
        }

        void watch() {
            checks = Flux.interval(Duration.ZERO, probeInterval, scheduler)
                    .onBackpressureDrop()
                    .concatMap(t -> probe.inspect(address, model, version, registration.inputType())
                            .map(check -> Map.entry(t, check)), 1)
                    .subscribe(result -> observe(result.getValue(), result.getKey()));
        }

        private void observe(ReadinessProbe.Result check, long tick) {
            synchronized (ExternalContainerManager.this) {
                if (state == ReplicaStatus.State.STOPPED) {
                    return;
                }
                detail = check.ready() ? null : check.detail();
                if (check.ready()) {
                    failedInARow = 0;
                    if (state != ReplicaStatus.State.READY) {
                        LOG.info("external replica {} at {} is ready", id, address);
                        state = ReplicaStatus.State.READY;
                        registration.register(address);
                    }
                    return;
                }
                failedInARow++;
                if (state == ReplicaStatus.State.READY && failedInARow >= failures) {
                    LOG.warn("external replica {} at {} failed {} checks in a row, the last: {}; unregistering it", id,
                            address, failedInARow, detail);
                    state = ReplicaStatus.State.UNHEALTHY;
                    registration.unregister();
                } else if (state == ReplicaStatus.State.STARTING && (check.mismatch()
                        || probeInterval.multipliedBy(tick).compareTo(readinessTimeout) >= 0)) {
                    LOG.warn("external replica {} at {} is not ready{}: {}; still checking", id, address,
                            check.mismatch() ? "" : " after " + readinessTimeout, detail);
                    state = ReplicaStatus.State.UNHEALTHY;
                }
            }
        }
    }
}
