package io.servegate.gateway.dispatch;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.core.scheduling.MultiModelScheduler;
import io.servegate.core.scheduling.SchedulerConfig;
import io.servegate.oip.client.Completion;
import io.servegate.oip.client.ContainerClient;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * One named pool of multi-model replicas and the model versions placed on it, scheduled by the
 * core's {@link MultiModelScheduler} through a {@link SchedulerDriver}. Loads and unloads go to the
 * replica as RepositoryModelLoad and RepositoryModelUnload, batches as ModelInfer on the model's
 * name and version. Which models a replica holds, when a load is worth its time and when a query
 * gets its default early because its model cannot be loaded in time are the scheduler's decisions.
 * A pool's replicas have no circuit breaker (theirs is disabled): the scheduler's retries and
 * ServerReady after a transport failure are their protection. What each replica's container
 * declares for each placed model (OIP ModelMetadata: datatype and shape) is read when the model is
 * placed and when the replica warms up, so that the model's queries are checked against it before
 * they are queued, as a model on replicas of its own is ({@link DeclaredInput}).
 */
final class SharedPool implements AutoCloseable {

    /** As a single-model replica's warm-up reads its metadata. */
    private static final Duration METADATA_TIMEOUT = Duration.ofSeconds(1);

    private final String name;
    private final long budgetBytes;
    private final SchedulerDriver<MultiModelScheduler<PendingPrediction>> driver;
    private final reactor.core.scheduler.Scheduler timers;
    private final Duration minBatchTimeout;
    private final int maxMessageBytes;
    /** What each replica's container declares for each placed model: model key, then replica id. */
    private final Map<String, Map<String, DeclaredInput>> declared = new ConcurrentHashMap<>();

    /** @param budgetBytes each replica's memory budget */
    SharedPool(String name, long budgetBytes, SchedulerConfig config, LongSupplier clock,
            reactor.core.scheduler.Scheduler timers, MeterRegistry meters, Duration minBatchTimeout,
            int maxMessageBytes) {
        this.name = name;
        this.budgetBytes = budgetBytes;
        this.timers = timers;
        this.minBatchTimeout = minBatchTimeout;
        this.maxMessageBytes = maxMessageBytes;
        this.driver = new SchedulerDriver<>("pool " + name, config.policy(), actions -> new MultiModelScheduler<>(config, actions),
                clock, timers);
        driver.listen(new PoolMeters(name, driver, meters));
    }

    String name() {
        return name;
    }

    long budgetBytes() {
        return budgetBytes;
    }

    SchedulerDriver<MultiModelScheduler<PendingPrediction>> driver() {
        return driver;
    }

    /** Places a model version on the pool; placing it again keeps its first size and load time. */
    void place(PlacedModel model) {
        driver.serve(model);
        driver.event((s, now) -> s.addModel(model.key(), model.sizeBytes(), model.loadNanos()));
        for (ReplicaWorker w : driver.workers()) {
            readDeclaration(w, model);
        }
    }

    /**
     * Reads what {@code worker}'s container declares for {@code model}; one that cannot answer yet
     * (not up, or declaring nothing for a model it has not loaded) is read again at its warm-up.
     */
    void readDeclaration(ReplicaWorker worker, PlacedModel model) {
        worker.client().modelMetadata(model.name(), model.version(), METADATA_TIMEOUT).thenAccept(md ->
                declared.computeIfAbsent(model.key(), k -> new ConcurrentHashMap<>())
                        .put(worker.id(), DeclaredInput.of(md, model.inputType())));
    }

    /** The input a placed model version's containers declare, merged across the pool's replicas. */
    DeclaredInput declaredInput(String key) {
        DeclaredInput merged = DeclaredInput.UNKNOWN;
        for (DeclaredInput d : declared.getOrDefault(key, Map.of()).values()) {
            merged = merged.merge(d);
        }
        return merged;
    }

    /** Adds a replica at {@code address} unless one with that address is here already. */
    synchronized void addReplica(String id, String address) {
        for (ReplicaWorker w : driver.workers()) {
            if (w.address().equals(address)) {
                return;
            }
        }
        CircuitBreaker none = CircuitBreaker.ofDefaults(id);
        none.transitionToDisabledState();
        ReplicaWorker worker = new ReplicaWorker(id, address, true, driver,
                ContainerClient.connect(address, maxMessageBytes, Completion.EVENT_LOOP), none, new PoolWarmUp(driver::models, this::readDeclaration), timers,
                minBatchTimeout, null);
        driver.add(worker, (s, now) -> s.addReplica(id, budgetBytes, now));
        worker.awaitReadiness();
    }

    Collection<ReplicaWorker> workers() {
        return driver.workers();
    }

    @Override
    public void close() {
        driver.close();
    }
}
