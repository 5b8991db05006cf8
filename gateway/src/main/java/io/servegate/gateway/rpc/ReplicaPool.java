package io.servegate.gateway.rpc;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.core.batching.AimdBatchingPolicy;
import io.servegate.core.batching.BatchLatencyProfile;
import io.servegate.gateway.batching.BatchQueue;
import io.servegate.core.batching.BatchingPolicy;
import io.servegate.core.batching.FixedBatchingPolicy;
import io.servegate.gateway.batching.ReplicaSelector;
import io.servegate.gateway.config.ServegateProperties;
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
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * All container replicas the registry knows, each with its own batching queue, client and
 * circuit breaker. It follows registry changes, routes each prediction to the least-loaded
 * available replica of its model version, and moves a prediction to another replica once when
 * its replica fails at the transport level.
 */
public final class ReplicaPool implements Dispatcher, AutoCloseable {

    private final ServegateProperties.Batching batching;
    private final ServegateProperties.Rpc rpc;
    private final CircuitBreakerRegistry breakers;
    private final MeterRegistry meters;
    private final LongSupplier clock;
    private final Scheduler timers;
    /** Copy-on-write: the request path reads without locks. */
    private volatile Map<String, ReplicaWorker> workers = Map.of();
    private volatile Map<String, List<ReplicaWorker>> byModel = Map.of();

    public ReplicaPool(ServegateProperties.Batching batching, ServegateProperties.Rpc rpc, MeterRegistry meters,
            LongSupplier clock, Scheduler timers) {
        this.batching = batching;
        this.rpc = rpc;
        this.meters = meters;
        this.clock = clock;
        this.timers = timers;
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
        PendingPrediction p = new PendingPrediction(input, deadlineNanos);
        route(p, model, version, null);
        return p.result;
    }

    /** Replicas of a model version, for the admin API and tests. */
    public List<ReplicaStatus> status(String model, String version) {
        List<ReplicaStatus> out = new ArrayList<>();
        for (ReplicaWorker w : byModel.getOrDefault(key(model, version), List.of())) {
            out.add(new ReplicaStatus(w.replica(), w.available(), w.queue().size(),
                    w.queue().policy().maxBatchSize(), breakers.circuitBreaker(w.replica().id()).getState().name()));
        }
        return out;
    }

    /** Whether a model version has at least one replica that takes queries now. */
    public boolean ready(String model, String version) {
        return byModel.getOrDefault(key(model, version), List.of()).stream().anyMatch(ReplicaWorker::available);
    }

    /** The input vector length a model version's containers declare, or -1 when unknown. */
    public int inputLength(String model, String version) {
        for (ReplicaWorker w : byModel.getOrDefault(key(model, version), List.of())) {
            if (w.inputLength() > 0) {
                return w.inputLength();
            }
        }
        return -1;
    }

    private void route(PendingPrediction p, String model, String version, ReplicaWorker exclude) {
        List<ReplicaWorker> candidates = new ArrayList<>();
        for (ReplicaWorker w : byModel.getOrDefault(key(model, version), List.of())) {
            if (w != exclude && w.available()) {
                candidates.add(w);
            }
        }
        if (candidates.isEmpty()) {
            p.result.completeExceptionally(new PredictionException(DefaultReason.NO_REPLICA,
                    "model " + model + ":" + version));
            return;
        }
        // least-loaded first; if its queue is full, try the next before giving up
        while (!candidates.isEmpty()) {
            ReplicaWorker w = ReplicaSelector.leastLoaded(candidates, ReplicaWorker::load);
            if (w.offer(p)) {
                return;
            }
            candidates.remove(w);
        }
        p.result.completeExceptionally(new PredictionException(DefaultReason.OVERLOADED,
                "model " + model + ":" + version));
    }

    /** Brings the workers in line with the registry: new replicas get workers, removed ones are closed. */
    public synchronized void sync(RegistrySnapshot snapshot) {
        Map<String, ReplicaWorker> next = new HashMap<>();
        List<ReplicaWorker> removed = new ArrayList<>(workers.values());
        for (ContainerReplica r : snapshot.replicas()) {
            ReplicaWorker existing = workers.get(r.id());
            if (existing != null && existing.replica().equals(r)) {
                next.put(r.id(), existing);
                removed.remove(existing);
                continue;
            }
            snapshot.model(r.modelName(), r.modelVersion()).ifPresent(m -> {
                ReplicaWorker w = newWorker(r, m, snapshot);
                next.put(r.id(), w);
                w.awaitReadiness();
            });
        }
        Map<String, List<ReplicaWorker>> grouped = new HashMap<>();
        for (ReplicaWorker w : next.values()) {
            grouped.computeIfAbsent(key(w.replica().modelName(), w.replica().modelVersion()), k -> new ArrayList<>())
                    .add(w);
        }
        grouped.replaceAll((k, v) -> List.copyOf(v));
        workers = Map.copyOf(next);
        byModel = Map.copyOf(grouped);
        // closing hands queued work to the survivors and shuts a gRPC channel: keep it off the caller's thread
        for (ReplicaWorker w : removed) {
            Schedulers.boundedElastic().schedule(() -> {
                w.close();
                breakers.remove(w.replica().id());
            });
        }
    }

    @SuppressWarnings("unchecked")
    private ReplicaWorker newWorker(ContainerReplica r, ModelVersion m, RegistrySnapshot snapshot) {
        BatchingPolicy policy = m.batchSize() > 0
                ? new FixedBatchingPolicy(m.batchSize())
                : new AimdBatchingPolicy(sloNanos(m, snapshot), AimdBatchingPolicy.DEFAULT_INITIAL_SIZE,
                        AimdBatchingPolicy.DEFAULT_ADDITIVE_STEP, AimdBatchingPolicy.DEFAULT_BACKOFF_FACTOR,
                        batching.maxBatchSize());
        BatchQueue<PendingPrediction> queue = new BatchQueue<>(policy, batching.batchWait().toNanos(),
                batching.queueCapacity(), batching.deadlineAware()
                        ? new BatchLatencyProfile(batching.profileWindow(), batching.profileMaxAge().toNanos())
                        : null);
        CircuitBreaker breaker = breakers.circuitBreaker(r.id());
        ContainerClient client = ContainerClient.connect(r.address(), (int) rpc.maxMessageSize().toBytes());
        return new ReplicaWorker(r, (TensorType<Object>) TensorType.forName(m.inputType()), queue, client, breaker,
                clock, timers, rpc.minBatchTimeout(),
                (p, failed) -> route(p, r.modelName(), r.modelVersion(), failed), meters);
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
        workers.values().forEach(ReplicaWorker::close);
        workers = Map.of();
        byModel = Map.of();
    }

    /** A replica as the admin API shows it. */
    public record ReplicaStatus(ContainerReplica replica, boolean available, int queueLength, int maxBatchSize,
            String circuit) {
    }
}
