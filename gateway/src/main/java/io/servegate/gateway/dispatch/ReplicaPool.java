package io.servegate.gateway.dispatch;

import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.servegate.core.autoscaling.ArrivalEnvelope;
import io.servegate.core.autoscaling.AutoscalerConfig;
import io.servegate.core.autoscaling.ScalingSignals;
import io.servegate.core.scheduling.ModelScheduler;
import io.servegate.core.scheduling.PolicyKind;
import io.servegate.core.scheduling.ReplicaEstimate;
import io.servegate.core.scheduling.SchedulerConfig;
import io.servegate.core.scheduling.Tenant;
import io.servegate.core.trace.RunRecorder;
import io.servegate.gateway.config.ServegateProperties;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.RegistrySnapshot;
import io.servegate.oip.client.Completion;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.TensorType;
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
 * All container replicas the registry knows, grouped by model version, and the pools of
 * multi-model replicas ({@link SharedPools}): the dispatch layer's face to the query layer. The
 * scheduler that serves a model version is chosen in one place ({@link #driver}): the pool's it is
 * placed on, else its own, around the core's {@code ModelScheduler}, which owns the version's
 * queue and binds batches to its single-model replicas. Each scheduler runs in a
 * {@link SchedulerDriver}; each replica's {@link ReplicaWorker} carries its batches out over gRPC,
 * a single-model replica's behind its own circuit breaker. It follows registry changes.
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
    private final ProfileSharing sharing;
    /** Copy-on-write: the request path reads without locks. */
    private volatile Map<String, Registered> replicas = Map.of();
    private volatile Map<String, OwnModel> models = Map.of();
    private final SharedPools shared;

    /** A single-model replica as the registry lists it, and its worker. */
    private record Registered(ContainerReplica replica, ReplicaWorker worker) {
    }

    /** A model version served by single-model replicas of its own, and its scheduler's driver. */
    private record OwnModel(PlacedModel model, SchedulerDriver<ModelScheduler<PendingPrediction>> driver) {
    }

    /**
     * @param recorder records the run of every model version for replay, or null (the pool does not close it)
     * @param sharing  whether this gateway profiles a version's replicas itself
     */
    public ReplicaPool(ServegateProperties.Batching batching, ServegateProperties.Scheduling scheduling,
            ServegateProperties.Rpc rpc, MeterRegistry meters, LongSupplier clock, Scheduler timers,
            RunRecorder recorder, ProfileSharing sharing) {
        this.batching = batching;
        this.scheduling = scheduling;
        this.rpc = rpc;
        this.meters = meters;
        this.clock = clock;
        this.timers = timers;
        this.recorder = recorder;
        this.sharing = sharing;
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

    /**
     * The driver of the scheduler that serves a model version, the one place that chooses it: the
     * pool's it is placed on, whatever single-model replicas the registry lists for it, else its
     * own; null when it has neither.
     */
    private SchedulerDriver<?> driver(String model, String version) {
        return driver(PlacedModel.key(model, version));
    }

    /** {@link #driver(String, String)} by the scheduler's name for the version, {@code name:version}. */
    private SchedulerDriver<?> driver(String key) {
        SchedulerDriver<?> pooled = shared.driver(key);
        return pooled != null ? pooled : own(key);
    }

    /** The driver of a model version's own single-model replicas, or null when it has none. */
    private SchedulerDriver<ModelScheduler<PendingPrediction>> own(String model, String version) {
        return own(PlacedModel.key(model, version));
    }

    private SchedulerDriver<ModelScheduler<PendingPrediction>> own(String key) {
        OwnModel own = models.get(key);
        return own == null ? null : own.driver();
    }

    @Override
    public CompletableFuture<String> submit(String model, String version, Object input, long deadlineNanos) {
        return submit(model, version, input, deadlineNanos, Tenant.DEFAULT);
    }

    @Override
    public CompletableFuture<String> submit(String model, String version, Object input, long deadlineNanos,
            Tenant tenant) {
        String key = PlacedModel.key(model, version);
        SchedulerDriver<?> driver = driver(key);
        if (driver == null) {
            return CompletableFuture.failedFuture(new DispatchException(DispatchFailure.NO_REPLICA, "model " + key));
        }
        return driver.submit(key, input, deadlineNanos, tenant);
    }

    /** Whether a model version has a replica that takes queries now (on a pool: whatever models it holds). */
    @Override
    public boolean ready(String model, String version) {
        SchedulerDriver<?> driver = driver(model, version);
        return driver != null && driver.ready();
    }

    /**
     * The input a model version's containers declare, merged across them (its single-model
     * replicas, or the replicas of the pool it is placed on): when they agree (as they should)
     * this allocates nothing, a lookup per query.
     */
    @Override
    public DeclaredInput declaredInput(String model, String version) {
        String key = PlacedModel.key(model, version);
        DeclaredInput pooled = shared.declaredInput(key);
        if (pooled != null) {
            return pooled; // a model version placed on a pool is served by the pool
        }
        SchedulerDriver<?> driver = own(key);
        DeclaredInput merged = DeclaredInput.UNKNOWN;
        if (driver != null) {
            for (ReplicaWorker w : driver.workers()) {
                merged = merged.merge(w.declaredInput());
            }
        }
        return merged;
    }

    /** The pools of multi-model replicas and the model versions placed on them. */
    public SharedPools shared() {
        return shared;
    }

    @Override
    public long singleQueryNanos(String model, String version) {
        SchedulerDriver<ModelScheduler<PendingPrediction>> driver = own(model, version);
        if (driver == null) {
            return -1;
        }
        return driver.read(s -> s.estimateNanos(1) < 0 ? -1 : s.estimateNanos(1) + s.overheadNanos());
    }

    /** The profiles of a version's single-model replicas here that have one, by replica id. */
    public Map<String, ReplicaEstimate> estimates(String model, String version) {
        SchedulerDriver<ModelScheduler<PendingPrediction>> driver = own(model, version);
        Map<String, ReplicaEstimate> out = new TreeMap<>();
        if (driver != null) {
            for (ReplicaWorker w : driver.workers()) {
                ReplicaEstimate e = driver.read(s -> s.estimate(w.id()));
                if (e != null) {
                    out.put(w.id(), e);
                }
            }
        }
        return out;
    }

    /**
     * Seeds the profiles of a version's single-model replicas here with {@code estimates} (another
     * gateway's, by replica id), as its own profiling pass would.
     *
     * @return whether every such replica here has warmed up: the version can be scheduled here now
     */
    public boolean seed(String model, String version, Map<String, ReplicaEstimate> estimates) {
        SchedulerDriver<ModelScheduler<PendingPrediction>> driver = own(model, version);
        if (driver == null) {
            return true;
        }
        boolean warm = true;
        for (ReplicaWorker w : driver.workers()) {
            ReplicaEstimate e = estimates.get(w.id());
            if (e != null) {
                e.serviceNanos().forEach((size, nanos) -> driver.profileSample(w.id(), PlacedModel.key(model, version),
                        size, nanos, nanos + e.overheadNanos()));
            }
            warm &= w.warm();
        }
        return warm;
    }

    /**
     * Stops scheduling a version that another fleet member takes over ({@link ModelScheduler#handOver}):
     * its queued queries fail with {@link DispatchFailure#MOVED}, for the fleet's dispatcher to
     * route to that member; its batches already sent run on. Nothing for a version not scheduled
     * by a single-model pool here.
     *
     * @return by replica id, how long until the batches sent there are planned to finish
     */
    public Map<String, Long> handOver(String model, String version) {
        SchedulerDriver<ModelScheduler<PendingPrediction>> driver = own(model, version);
        if (driver == null) {
            return Map.of();
        }
        Map<String, Long> backlog = new TreeMap<>();
        driver.event((s, now) -> backlog.putAll(s.handOver(now)));
        return backlog;
    }

    /**
     * Plans a version's replicas busy for as long as {@code backlog} says (by replica id, in
     * nanoseconds from now): the batches the gateway that scheduled the version until now still
     * runs there ({@link ModelScheduler#busyFor}).
     */
    public void busyFor(String model, String version, Map<String, Long> backlog) {
        SchedulerDriver<ModelScheduler<PendingPrediction>> driver = own(model, version);
        if (driver != null && !backlog.isEmpty()) {
            driver.event((s, now) -> backlog.forEach((replica, nanos) -> s.busyFor(replica, nanos, now)));
        }
    }

    /** Replicas of a model version, for the admin API and tests. */
    public List<ReplicaStatus> status(String model, String version) {
        SchedulerDriver<ModelScheduler<PendingPrediction>> driver = own(model, version);
        List<ReplicaStatus> out = new ArrayList<>();
        if (driver != null) {
            for (Registered r : replicas.values()) {
                ReplicaWorker w = r.worker();
                if (r.replica().modelName().equals(model) && r.replica().modelVersion().equals(version)) {
                    out.add(new ReplicaStatus(r.replica(), w.available(), w.inFlight(),
                            driver.read(s -> s.maxBatchSize(w.id())),
                            breakers.circuitBreaker(w.id()).getState().name(),
                            driver.read(s -> s.idleFraction(w.id(), clock.getAsLong()))));
                }
            }
        }
        return out;
    }

    /** A model version's load signals, or null when it has no replicas here. */
    public ModelSignals signals(String model, String version) {
        SchedulerDriver<ModelScheduler<PendingPrediction>> driver = own(model, version);
        return driver == null ? null : driver.read(s -> {
            long now = clock.getAsLong();
            return new ModelSignals(s.arrivalRate(now), s.envelope().envelope(ArrivalEnvelope.MAX_LOOKBACK_NANOS, now),
                    s.arrived(), s.bad(), s.idleFraction(now), s.queued(), s.availableReplicas());
        });
    }

    /**
     * What a model version's autoscaler decides on, or null when it has no replicas here.
     *
     * @param replicas replicas asked for, as the autoscaler knows it
     */
    public ScalingSignals scalingSignals(String model, String version, int replicas, AutoscalerConfig config) {
        SchedulerDriver<ModelScheduler<PendingPrediction>> driver = own(model, version);
        return driver == null ? null : driver.read(s -> ScalingSignals.read(s, replicas, config, clock.getAsLong()));
    }

    /** A model version's scheduling policy, or null when it has no replicas here. */
    public PolicyKind policy(String model, String version) {
        SchedulerDriver<ModelScheduler<PendingPrediction>> driver = own(model, version);
        return driver == null ? null : driver.read(ModelScheduler::policy);
    }

    /** Brings the schedulers and workers in line with the registry: new replicas get workers, removed ones are closed. */
    public synchronized void sync(RegistrySnapshot snapshot) {
        Map<String, Registered> next = new HashMap<>();
        Map<String, OwnModel> nextModels = new HashMap<>(models);
        List<Registered> removed = new ArrayList<>(replicas.values());
        List<Registered> added = new ArrayList<>();
        for (ContainerReplica r : snapshot.replicas()) {
            Registered existing = replicas.get(r.id());
            if (existing != null && existing.replica().equals(r)) {
                next.put(r.id(), existing);
                removed.remove(existing);
                continue;
            }
            snapshot.model(r.modelName(), r.modelVersion()).ifPresent(m -> {
                OwnModel own = nextModels.computeIfAbsent(PlacedModel.key(m.name(), m.version()),
                        k -> newModel(m, snapshot));
                Registered registered = new Registered(r, newWorker(r, own));
                next.put(r.id(), registered);
                added.add(registered);
            });
        }
        for (Registered r : removed) {
            nextModels.get(PlacedModel.key(r.replica().modelName(), r.replica().modelVersion())).driver()
                    .remove(r.worker());
        }
        for (Registered r : added) {
            String id = r.replica().id();
            nextModels.get(PlacedModel.key(r.replica().modelName(), r.replica().modelVersion())).driver()
                    .add(r.worker(), (s, now) -> s.addReplica(id, 1, now));
            r.worker().awaitReadiness();
        }
        List<OwnModel> idle = new ArrayList<>();
        nextModels.values().removeIf(own -> own.driver().workers().isEmpty() && idle.add(own));
        nextModels.values().forEach(own -> snapshot.model(own.model().name(), own.model().version())
                .ifPresent(m -> own.driver().event((s, now) -> s.setMaxBatchSize(maxBatchSize(m), now))));
        replicas = Map.copyOf(next);
        models = Map.copyOf(nextModels);
        idle.forEach(own -> own.driver().close());
        // closing shuts a gRPC channel down gracefully: keep it off the caller's thread
        for (Registered r : removed) {
            Schedulers.boundedElastic().schedule(() -> {
                r.worker().close();
                breakers.remove(r.replica().id());
            });
        }
    }

    /** A model version's own scheduler, with its meters and, when the run is recorded, its recording. */
    private OwnModel newModel(ModelVersion m, RegistrySnapshot snapshot) {
        PlacedModel model = new PlacedModel(m.name(), m.version(), TensorType.forName(m.inputType()), 0, 0);
        SchedulerConfig config = config(m, snapshot);
        SchedulerDriver<ModelScheduler<PendingPrediction>> driver = new SchedulerDriver<>("model " + model.key(),
                config.policy(), actions -> new ModelScheduler<>(model.key(), config, actions), clock, timers);
        driver.serve(model);
        driver.listen(new SchedulerMeters(tags(model), config, driver, meters));
        if (recorder != null) {
            driver.listen(new RunRecording(recorder, model.key(), config));
        }
        return new OwnModel(model, driver);
    }

    private ReplicaWorker newWorker(ContainerReplica r, OwnModel own) {
        SchedulerDriver<ModelScheduler<PendingPrediction>> driver = own.driver();
        PolicyKind policy = driver.read(ModelScheduler::policy);
        int profileMaxBatch = scheduling.profileOnRegister() && policy != PolicyKind.CLIPPER
                ? Math.min(scheduling.profileMaxBatch(), batching.maxBatchSize()) : 0;
        return new ReplicaWorker(r.id(), r.address(), false, driver,
                ContainerClient.connect(r.address(), (int) rpc.maxMessageSize().toBytes(), Completion.EVENT_LOOP),
                breakers.circuitBreaker(r.id()), new ProfilingWarmUp(own.model(), profileMaxBatch, sharing), timers,
                rpc.minBatchTimeout(), w -> new ReplicaMeters(w, tags(own.model()), driver, meters));
    }

    private static Tags tags(PlacedModel model) {
        return Tags.of("model", model.name(), "version", model.version());
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
        SchedulerDriver<ModelScheduler<PendingPrediction>> driver = own(model, version);
        return driver == null ? 0 : driver.read(ModelScheduler::maxBatchSize);
    }

    /**
     * Whether a model version's scheduler here has room for optional work now: a replica takes
     * queries and less than one batch waits (false when it has no replicas here).
     */
    public boolean hasRoom(String model, String version) {
        SchedulerDriver<ModelScheduler<PendingPrediction>> driver = own(model, version);
        return driver != null && driver.read(s -> s.availableReplicas() > 0 && s.queued() < s.maxBatchSize());
    }

    /** The addresses of a model version's replicas that take queries now, by replica id. */
    public Map<String, String> availableReplicas(String model, String version) {
        SchedulerDriver<ModelScheduler<PendingPrediction>> driver = own(model, version);
        Map<String, String> out = new TreeMap<>();
        if (driver != null) {
            driver.workers().stream().filter(ReplicaWorker::available).forEach(w -> out.put(w.id(), w.address()));
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

    @Override
    public synchronized void close() {
        shared.close();
        models.values().forEach(own -> own.driver().close());
        replicas = Map.of();
        models = Map.of();
    }

    /** A replica as the admin API shows it. */
    public record ReplicaStatus(ContainerReplica replica, boolean available, int queueLength, int maxBatchSize,
            String circuit, double idleFraction) {
    }
}
