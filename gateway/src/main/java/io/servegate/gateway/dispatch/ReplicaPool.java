package io.servegate.gateway.dispatch;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.core.autoscaling.AutoscalerConfig;
import io.servegate.core.autoscaling.ScalingSignals;
import io.servegate.core.scheduling.PolicyKind;
import io.servegate.core.scheduling.SchedulerConfig;
import io.servegate.core.trace.RunRecorder;
import io.servegate.gateway.config.ServegateProperties;
import io.servegate.gateway.query.DefaultReason;
import io.servegate.gateway.query.PredictionException;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.RegistrySnapshot;
import io.servegate.sdk.ContainerClient;
import io.servegate.sdk.TensorType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * All container replicas the registry knows, grouped by model version: one scheduler per model
 * version ({@link ModelDispatch}, around the core's {@code ModelScheduler}) owns the version's
 * queue and binds batches to its replicas, whose {@link ReplicaWorker}s carry them out over
 * gRPC, each behind its own circuit breaker. It follows registry changes. Model versions placed
 * on a pool of multi-model replicas are served by its {@link SharedPools} instead.
 */
public final class ReplicaPool implements Dispatcher, LatencyProfiles, AutoCloseable {

    private final ServegateProperties.Batching batching;
    private final ServegateProperties.Scheduling scheduling;
    private final ServegateProperties.Rpc rpc;
    private final CircuitBreakerRegistry breakers;
    private final MeterRegistry meters;
    private final LongSupplier clock;
    private final Scheduler timers;
    /** Null when the run is not recorded. */
    private final RunRecorder recorder;
    /** Copy-on-write: the request path reads without locks. */
    private volatile Map<String, ReplicaWorker> workers = Map.of();
    private volatile Map<String, ModelDispatch> models = Map.of();
    private final SharedPools shared;

    /** @param recorder records the run of every model version for replay, or null (the pool does not close it) */
    public ReplicaPool(ServegateProperties.Batching batching, ServegateProperties.Scheduling scheduling,
            ServegateProperties.Rpc rpc, MeterRegistry meters, LongSupplier clock, Scheduler timers,
            RunRecorder recorder) {
        this.batching = batching;
        this.scheduling = scheduling;
        this.rpc = rpc;
        this.meters = meters;
        this.clock = clock;
        this.timers = timers;
        this.recorder = recorder;
        this.shared = new SharedPools(batching, scheduling, rpc, meters, clock, timers);
        this.breakers = CircuitBreakerRegistry.of(CircuitBreakerConfig.custom()
                .failureRateThreshold(rpc.failureRateThreshold())
                .slidingWindowSize(rpc.slidingWindowSize())
                .minimumNumberOfCalls(rpc.minimumNumberOfCalls())
                .waitDurationInOpenState(rpc.waitInOpenState())
                .permittedNumberOfCallsInHalfOpenState(rpc.permittedCallsInHalfOpenState())
                .automaticTransitionFromOpenToHalfOpenEnabled(true)
                .build());
        // every state change is counted, so that an operator (and the fault tests) can see a circuit
        // open, half-open and close again even when it stays open for less than a scrape interval
        breakers.getEventPublisher().onEntryAdded(added -> added.getAddedEntry().getEventPublisher()
                .onStateTransition(e -> meters.counter("servegate.circuit.transitions",
                        "replica", e.getCircuitBreakerName(),
                        "from", e.getStateTransition().getFromState().name(),
                        "to", e.getStateTransition().getToState().name()).increment()));
    }

    @Override
    public CompletableFuture<String> submit(String model, String version, Object input, long deadlineNanos) {
        if (shared.serves(model, version)) {
            return shared.submit(model, version, input, deadlineNanos);
        }
        ModelDispatch dispatch = models.get(key(model, version));
        if (dispatch == null) {
            return CompletableFuture.failedFuture(new PredictionException(DefaultReason.NO_REPLICA,
                    "model " + model + ":" + version));
        }
        return dispatch.submit(input, deadlineNanos);
    }

    /** The pools of multi-model replicas and the model versions placed on them. */
    public SharedPools shared() {
        return shared;
    }

    @Override
    public long singleQueryNanos(String model, String version) {
        ModelDispatch dispatch = models.get(key(model, version));
        if (dispatch == null) {
            return -1;
        }
        return dispatch.read(s -> s.estimateNanos(1) < 0 ? -1 : s.estimateNanos(1) + s.overheadNanos());
    }

    /** Replicas of a model version, for the admin API and tests. */
    public List<ReplicaStatus> status(String model, String version) {
        ModelDispatch dispatch = models.get(key(model, version));
        List<ReplicaStatus> out = new ArrayList<>();
        if (dispatch != null) {
            for (ReplicaWorker w : dispatch.workers()) {
                out.add(new ReplicaStatus(w.replica(), w.available(), w.inFlight(),
                        dispatch.read(s -> s.maxBatchSize(w.replica().id())),
                        breakers.circuitBreaker(w.replica().id()).getState().name(),
                        dispatch.read(s -> s.idleFraction(w.replica().id(), clock.getAsLong()))));
            }
        }
        return out;
    }

    /** A model version's load signals, or null when it has no replicas here. */
    public ModelSignals signals(String model, String version) {
        ModelDispatch dispatch = models.get(key(model, version));
        return dispatch == null ? null : dispatch.signals();
    }

    /**
     * What a model version's autoscaler decides on, or null when it has no replicas here.
     *
     * @param replicas replicas asked for, as the autoscaler knows it
     */
    public ScalingSignals scalingSignals(String model, String version, int replicas, AutoscalerConfig config) {
        ModelDispatch dispatch = models.get(key(model, version));
        return dispatch == null ? null : dispatch.scalingSignals(replicas, config);
    }

    /** A model version's scheduling policy, or null when it has no replicas here. */
    public PolicyKind policy(String model, String version) {
        ModelDispatch dispatch = models.get(key(model, version));
        return dispatch == null ? null : dispatch.read(s -> s.policy());
    }

    /** Whether a model version has at least one replica that takes queries now. */
    public boolean ready(String model, String version) {
        if (shared.serves(model, version)) {
            return shared.ready(model, version);
        }
        ModelDispatch dispatch = models.get(key(model, version));
        return dispatch != null && dispatch.workers().stream().anyMatch(ReplicaWorker::available);
    }

    /** The input vector length a model version's containers declare, or -1 when unknown. */
    public int inputLength(String model, String version) {
        ModelDispatch dispatch = models.get(key(model, version));
        if (dispatch != null) {
            for (ReplicaWorker w : dispatch.workers()) {
                if (w.inputLength() > 0) {
                    return w.inputLength();
                }
            }
        }
        return -1;
    }

    /** Brings the schedulers and workers in line with the registry: new replicas get workers, removed ones are closed. */
    public synchronized void sync(RegistrySnapshot snapshot) {
        Map<String, ReplicaWorker> next = new HashMap<>();
        Map<String, ModelDispatch> nextModels = new HashMap<>(models);
        List<ReplicaWorker> removed = new ArrayList<>(workers.values());
        List<ReplicaWorker> added = new ArrayList<>();
        for (ContainerReplica r : snapshot.replicas()) {
            ReplicaWorker existing = workers.get(r.id());
            if (existing != null && existing.replica().equals(r)) {
                next.put(r.id(), existing);
                removed.remove(existing);
                continue;
            }
            snapshot.model(r.modelName(), r.modelVersion()).ifPresent(m -> {
                ModelDispatch dispatch = nextModels.computeIfAbsent(key(m.name(), m.version()),
                        k -> new ModelDispatch(m.name(), m.version(), config(m, snapshot), clock, timers, meters,
                                recorder));
                ReplicaWorker w = newWorker(r, m, dispatch);
                next.put(r.id(), w);
                added.add(w);
            });
        }
        for (ReplicaWorker w : removed) {
            nextModels.get(key(w.replica().modelName(), w.replica().modelVersion())).remove(w);
        }
        for (ReplicaWorker w : added) {
            nextModels.get(key(w.replica().modelName(), w.replica().modelVersion())).add(w);
            w.awaitReadiness();
        }
        List<ModelDispatch> idle = new ArrayList<>();
        nextModels.values().removeIf(d -> d.workers().isEmpty() && idle.add(d));
        nextModels.values().forEach(d -> snapshot.model(d.model(), d.version())
                .ifPresent(m -> d.setMaxBatchSize(maxBatchSize(m))));
        workers = Map.copyOf(next);
        models = Map.copyOf(nextModels);
        idle.forEach(ModelDispatch::close);
        // closing shuts a gRPC channel down gracefully: keep it off the caller's thread
        for (ReplicaWorker w : removed) {
            Schedulers.boundedElastic().schedule(() -> {
                w.close();
                breakers.remove(w.replica().id());
            });
        }
    }

    @SuppressWarnings("unchecked")
    private ReplicaWorker newWorker(ContainerReplica r, ModelVersion m, ModelDispatch dispatch) {
        CircuitBreaker breaker = breakers.circuitBreaker(r.id());
        ContainerClient client = ContainerClient.connect(r.address(), (int) rpc.maxMessageSize().toBytes());
        PolicyKind policy = dispatch.read(s -> s.policy());
        int profileMaxBatch = scheduling.profileOnRegister() && policy != PolicyKind.CLIPPER
                ? Math.min(scheduling.profileMaxBatch(), batching.maxBatchSize()) : 0;
        return new ReplicaWorker(r, (TensorType<Object>) TensorType.forName(m.inputType()), dispatch, client, breaker,
                clock, timers, rpc.minBatchTimeout(), profileMaxBatch, meters);
    }

    /** A version's batch cap: its own (a pipeline plan's) within the gateway's {@code max-batch-size}. */
    public int maxBatchSize(ModelVersion m) {
        return m.maxBatchSize() > 0 ? Math.min(m.maxBatchSize(), batching.maxBatchSize()) : batching.maxBatchSize();
    }

    /** The gateway's largest batch, {@code servegate.batching.max-batch-size}: no version's cap exceeds it. */
    public int gatewayMaxBatchSize() {
        return batching.maxBatchSize();
    }

    /** A model version's batch cap as its scheduler applies it now, or 0 when it has no replicas here. */
    public int maxBatchSize(String model, String version) {
        ModelDispatch dispatch = models.get(key(model, version));
        return dispatch == null ? 0 : dispatch.maxBatchSize();
    }

    /** The addresses of a model version's replicas that take queries now, by replica id. */
    public Map<String, String> availableReplicas(String model, String version) {
        ModelDispatch dispatch = models.get(key(model, version));
        Map<String, String> out = new TreeMap<>();
        if (dispatch != null) {
            dispatch.workers().stream().filter(ReplicaWorker::available)
                    .forEach(w -> out.put(w.replica().id(), w.replica().address()));
        }
        return out;
    }

    private SchedulerConfig config(ModelVersion m, RegistrySnapshot snapshot) {
        PolicyKind policy = m.scheduler() != null ? m.scheduler() : scheduling.policy();
        return SchedulerConfig.of(policy, sloNanos(m, snapshot))
                .withBatchSizes(batching.maxBatchSize(), m.batchSize())
                .withBatchWait(batching.batchWait().toNanos())
                .withQueueCapacity(batching.queueCapacity())
                .withProfile(batching.profileWindow(), batching.profileMaxAge().toNanos())
                .withSafetyMargin(scheduling.safetyMargin().toNanos());
    }

    /** AIMD aims at the tightest SLO among the apps linked to the model (Clipper batches per container). */
    private long sloNanos(ModelVersion m, RegistrySnapshot snapshot) {
        long slo = Long.MAX_VALUE;
        for (Application app : snapshot.apps()) {
            if (app.linkedModels().contains(m.name())) {
                slo = Math.min(slo, app.latencySloMicros() * 1000);
            }
        }
        return slo == Long.MAX_VALUE ? batching.defaultSlo().toNanos() : slo;
    }

    private static String key(String model, String version) {
        return model + ':' + version;
    }

    @Override
    public synchronized void close() {
        shared.close();
        workers.values().forEach(ReplicaWorker::close);
        models.values().forEach(ModelDispatch::close);
        workers = Map.of();
        models = Map.of();
    }

    /** A replica as the admin API shows it. */
    public record ReplicaStatus(ContainerReplica replica, boolean available, int queueLength, int maxBatchSize,
            String circuit, double idleFraction) {
    }
}
