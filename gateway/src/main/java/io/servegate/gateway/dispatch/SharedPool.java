package io.servegate.gateway.dispatch;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.servegate.core.scheduling.Batch;
import io.servegate.core.scheduling.Load;
import io.servegate.core.scheduling.MultiModelScheduler;
import io.servegate.core.scheduling.Query;
import io.servegate.core.scheduling.RejectReason;
import io.servegate.core.scheduling.SchedulerActions;
import io.servegate.core.scheduling.SchedulerConfig;
import io.servegate.gateway.query.DefaultReason;
import io.servegate.gateway.query.PredictionException;
import io.servegate.sdk.ContainerClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import reactor.core.scheduler.Scheduler;

/**
 * Carries out the core's {@link MultiModelScheduler} for one named pool of multi-model replicas,
 * as {@link ModelDispatch} does a single model's scheduler: events reach the scheduler under this
 * object's lock, and the actions it takes (a load, an unload, a batch, a default, a timer) are
 * recorded there and carried out once the lock is released. Loads and unloads go to the replica
 * as RepositoryModelLoad and RepositoryModelUnload, batches as ModelInfer on the model's name and
 * version. Which models a replica holds, when a load is worth its time and when a query gets its
 * default early because its model cannot be loaded in time are the scheduler's decisions.
 */
final class SharedPool implements SchedulerActions<PendingPrediction>, AutoCloseable {

    private final String name;
    private final MultiModelScheduler<PendingPrediction> scheduler;
    private final LongSupplier clock;
    private final Scheduler timers;
    private final MeterRegistry meters;
    private final Duration minBatchTimeout;
    private final int maxMessageBytes;
    private final Map<String, PlacedModel> models = new ConcurrentHashMap<>();
    private volatile Map<String, SharedReplicaWorker> workers = Map.of();
    private final List<Meter> ownMeters = new ArrayList<>();
    private final Timer loadTime;
    /** Actions the scheduler took during the current event; guarded by {@code this}. */
    private List<Runnable> actions = new ArrayList<>();
    /** Opened once the current event's lock is released: no replica call starts before. Guarded by {@code this}. */
    private CompletableFuture<Void> gate = new CompletableFuture<>();

    SharedPool(String name, SchedulerConfig config, LongSupplier clock, Scheduler timers, MeterRegistry meters,
            Duration minBatchTimeout, int maxMessageBytes) {
        this.name = name;
        this.clock = clock;
        this.timers = timers;
        this.meters = meters;
        this.minBatchTimeout = minBatchTimeout;
        this.maxMessageBytes = maxMessageBytes;
        this.scheduler = new MultiModelScheduler<>(config, this);
        Tags tags = Tags.of("pool", name);
        loadTime = Timer.builder("servegate.pool.load.time").tags(tags).publishPercentileHistogram()
                .description("How long a replica of the pool took to load a model (RepositoryModelLoad round trip)")
                .register(meters);
        ownMeters.add(loadTime);
        ownMeters.add(FunctionCounter.builder("servegate.pool.arrivals", this, p -> p.read(s -> s.arrived()))
                .tags(tags).description("Queries submitted to the pool's scheduler").register(meters));
        ownMeters.add(FunctionCounter.builder("servegate.pool.cold.starts", this, p -> p.read(s -> s.coldStarts()))
                .tags(tags).description("Queries that arrived when no replica of the pool held their model")
                .register(meters));
        ownMeters.add(FunctionCounter.builder("servegate.pool.loads", this, p -> p.read(s -> s.loads()))
                .tags(tags).description("Model loads the pool's scheduler sent").register(meters));
        ownMeters.add(FunctionCounter.builder("servegate.pool.evictions", this, p -> p.read(s -> s.evictions()))
                .tags(tags).description("Models unloaded to make room for another").register(meters));
        ownMeters.add(Gauge.builder("servegate.pool.queue.length", this, p -> p.read(s -> s.queued()))
                .tags(tags).description("Queries waiting in the pool, all models together").register(meters));
        for (RejectReason reason : RejectReason.values()) {
            ownMeters.add(FunctionCounter.builder("servegate.pool.rejected", this, p -> p.read(s -> s.rejected(reason)))
                    .tags(tags.and("reason", DefaultReason.of(reason).tag()))
                    .description("Queries the pool's scheduler answered with the default, by reason").register(meters));
        }
    }

    static String key(String model, String version) {
        return model + ':' + version;
    }

    String name() {
        return name;
    }

    // ---- placement ----

    /** Places a model version on the pool; placing it again keeps its first size and load time. */
    void place(PlacedModel model) {
        models.putIfAbsent(model.key(), model);
        event(now -> scheduler.addModel(model.key(), model.sizeBytes(), model.loadNanos()));
    }

    Collection<PlacedModel> models() {
        return models.values();
    }

    /**
     * The model a replica warms up with: a placed one it holds already, else the smallest placed one
     * (ties by name and version); only models with numeric inputs, whose inputs can be made up. Null
     * when there is none.
     */
    PlacedModel warmUpModel(Collection<String> held) {
        PlacedModel best = null;
        for (PlacedModel m : models.values()) {
            if (ReplicaWorker.zeros(m.inputType(), 1) == null) {
                continue;
            }
            boolean holds = held.contains(m.key());
            boolean bestHeld = best != null && held.contains(best.key());
            if (best == null || holds && !bestHeld || holds == bestHeld && (m.sizeBytes() < best.sizeBytes()
                    || m.sizeBytes() == best.sizeBytes() && m.key().compareTo(best.key()) < 0)) {
                best = m;
            }
        }
        return best;
    }

    /** Adds a replica at {@code address} unless one with that address is here already. */
    void addReplica(String id, String address, long budgetBytes) {
        SharedReplicaWorker worker;
        synchronized (this) {
            for (SharedReplicaWorker w : workers.values()) {
                if (w.address().equals(address)) {
                    return;
                }
            }
            worker = new SharedReplicaWorker(id, address, budgetBytes, this,
                    ContainerClient.connect(address, maxMessageBytes), clock, timers, minBatchTimeout);
            Map<String, SharedReplicaWorker> next = new LinkedHashMap<>(workers);
            next.put(id, worker);
            workers = Map.copyOf(next);
            scheduler.addReplica(id, budgetBytes, clock.getAsLong());
        }
        worker.awaitReadiness();
    }

    Collection<SharedReplicaWorker> workers() {
        return workers.values();
    }

    boolean ready() {
        return workers.values().stream().anyMatch(SharedReplicaWorker::available);
    }

    // ---- events ----

    CompletableFuture<String> submit(String model, String version, Object input, long deadline) {
        PendingPrediction p = new PendingPrediction(input);
        event(now -> scheduler.submit(key(model, version), p, deadline, now));
        return p.result;
    }

    /** A replica answers ServerReady; of the models it holds already, those placed here and fitting count as loaded. */
    void replicaReady(String replica, List<String> loaded) {
        event(now -> {
            for (String model : loaded) {
                if (models.containsKey(model) && !scheduler.heldModels(replica).contains(model)) {
                    try {
                        scheduler.preloaded(replica, model, now);
                    } catch (IllegalArgumentException full) {
                        // over the budget the scheduler plans with: it loads what it needs, the container evicts
                    }
                }
            }
            scheduler.setAvailable(replica, true, now);
        });
    }

    /** A replica's measured warm-up batch of one of {@code model}: its transport overhead and the model's service time. */
    void warmedUp(String replica, PlacedModel model, long serviceNanos, long roundTripNanos) {
        event(now -> scheduler.profileSample(replica, model.key(), 1, serviceNanos, roundTripNanos, now));
    }

    void availability(String replica, boolean available) {
        event(now -> scheduler.setAvailable(replica, available, now));
    }

    void loadCompleted(Load load, long tookNanos) {
        event(now -> {
            actions.add(() -> loadTime.record(tookNanos, TimeUnit.NANOSECONDS));
            scheduler.loadCompleted(load, tookNanos, now);
        });
    }

    void loadFailed(Load load) {
        event(now -> scheduler.loadFailed(load, now));
    }

    void completed(Batch<PendingPrediction> batch, long serviceNanos) {
        event(now -> scheduler.batchCompleted(batch, serviceNanos, now));
    }

    void failed(Batch<PendingPrediction> batch, Collection<Query<PendingPrediction>> retry, PredictionException error) {
        event(now -> {
            for (Query<PendingPrediction> q : scheduler.batchFailed(batch, retry, now)) {
                actions.add(() -> q.payload().result.completeExceptionally(error));
            }
        });
    }

    // ---- actions (called by the scheduler, under the lock) ----

    @Override
    public void send(Batch<PendingPrediction> batch) {
        SharedReplicaWorker worker = workers.get(batch.replica());
        if (worker == null) {
            actions.add(() -> failed(batch, batch.queries(), new PredictionException(DefaultReason.NO_REPLICA,
                    "replica " + batch.replica() + " was removed")));
        } else {
            worker.send(batch, models.get(batch.model()), gate);
        }
    }

    @Override
    public void load(Load load) {
        SharedReplicaWorker worker = workers.get(load.replica());
        if (worker == null) {
            actions.add(() -> loadFailed(load));
        } else {
            worker.load(load, models.get(load.model()), gate);
        }
    }

    @Override
    public void unload(String replica, String model) {
        SharedReplicaWorker worker = workers.get(replica);
        if (worker != null) {
            worker.unload(models.get(model), gate);
        }
    }

    @Override
    public void reject(Query<PendingPrediction> query, RejectReason reason) {
        actions.add(() -> query.payload().result.completeExceptionally(new PredictionException(
                DefaultReason.of(reason), "pool " + name)));
    }

    @Override
    public void wakeAt(long nanos) {
        actions.add(() -> timers.schedule(() -> event(scheduler::timer),
                Math.max(0, nanos - clock.getAsLong()), TimeUnit.NANOSECONDS));
    }

    private void event(LongConsumer event) {
        List<Runnable> todo;
        CompletableFuture<Void> opened;
        synchronized (this) {
            event.accept(clock.getAsLong());
            todo = actions;
            opened = gate;
            actions = new ArrayList<>();
            gate = new CompletableFuture<>();
        }
        opened.complete(null);
        for (Runnable action : todo) {
            action.run();
        }
    }

    // ---- reads, for metrics and the admin API ----

    synchronized <T> T read(Function<MultiModelScheduler<PendingPrediction>, T> reader) {
        return reader.apply(scheduler);
    }

    @Override
    public synchronized void close() {
        workers.values().forEach(SharedReplicaWorker::close);
        workers = Map.of();
        ownMeters.forEach(meters::remove);
    }
}
