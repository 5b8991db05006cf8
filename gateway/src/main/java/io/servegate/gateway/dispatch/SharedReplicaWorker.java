package io.servegate.gateway.dispatch;

import io.grpc.Status;
import io.servegate.core.scheduling.Batch;
import io.servegate.core.scheduling.Load;
import io.servegate.core.scheduling.Query;
import io.servegate.gateway.query.DefaultReason;
import io.servegate.gateway.query.PredictionException;
import io.servegate.sdk.ContainerClient;
import io.servegate.sdk.TensorType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import reactor.core.scheduler.Scheduler;

/**
 * The gRPC side of one multi-model replica of a {@link SharedPool}: it waits for ServerReady (a
 * many-model container's ModelReady is true only while a model is loaded, so it is not asked),
 * reads which models the container holds already, then carries out the loads, unloads and batches
 * the pool's scheduler gives it, with RepositoryModelLoad, RepositoryModelUnload and ModelInfer.
 *
 * <p>Order matters on a replica that holds models: a load or unload starts once everything sent
 * to the replica before it has returned, and a batch once the loads and unloads sent before it
 * have (batches themselves may overlap, as on single-model replicas). Every operation also waits
 * for its {@code gate}, which the pool opens once the scheduler's lock is released, so that no
 * call starts under that lock.
 */
final class SharedReplicaWorker implements AutoCloseable {

    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);
    /**
     * A load or unload may take this many times the model's profiled load time, and at least
     * {@link #MIN_REPOSITORY_TIMEOUT}, before it is failed: the replica runs one thing at a time,
     * so a load that hangs would otherwise hold everything sent after it.
     */
    private static final int REPOSITORY_TIMEOUT_FACTOR = 10;
    private static final Duration MIN_REPOSITORY_TIMEOUT = Duration.ofSeconds(1);
    /** As a single-model replica's warm-up calls may take. */
    private static final Duration WARM_UP_TIMEOUT = Duration.ofSeconds(30);

    private final String id;
    private final String address;
    private final long budgetBytes;
    private final SharedPool pool;
    private final ContainerClient client;
    private final LongSupplier clock;
    private final Scheduler timers;
    private final Duration minBatchTimeout;
    /** The last load or unload sent; guarded by {@code this}. */
    private CompletableFuture<Void> barrier = DONE;
    /** Everything sent; guarded by {@code this}. */
    private CompletableFuture<Void> tail = DONE;
    private final AtomicBoolean probing = new AtomicBoolean();
    /** Whether the warm-up ran: it runs before the replica first takes queries, not after each recovery. */
    private volatile boolean warmedUp;
    private volatile boolean ready;
    private volatile boolean closed;

    SharedReplicaWorker(String id, String address, long budgetBytes, SharedPool pool, ContainerClient client,
            LongSupplier clock, Scheduler timers, Duration minBatchTimeout) {
        this.id = id;
        this.address = address;
        this.budgetBytes = budgetBytes;
        this.pool = pool;
        this.client = client;
        this.clock = clock;
        this.timers = timers;
        this.minBatchTimeout = minBatchTimeout;
    }

    String id() {
        return id;
    }

    String address() {
        return address;
    }

    long budgetBytes() {
        return budgetBytes;
    }

    boolean available() {
        return ready && !closed;
    }

    /** Polls ServerReady until it says yes, then reports the models the container holds already. */
    void awaitReadiness() {
        if (probing.compareAndSet(false, true)) {
            poll();
        }
    }

    private void poll() {
        if (closed) {
            probing.set(false);
            return;
        }
        client.serverReady(Duration.ofSeconds(1)).whenComplete((isReady, error) -> {
            if (error != null || !Boolean.TRUE.equals(isReady)) {
                timers.schedule(this::poll, 500, TimeUnit.MILLISECONDS);
                return;
            }
            client.repositoryIndex(true, Duration.ofSeconds(1)).whenComplete((index, indexError) -> {
                List<String> loaded = new ArrayList<>();
                if (indexError == null) {
                    index.getModelsList().forEach(m -> loaded.add(SharedPool.key(m.getName(), m.getVersion())));
                }
                if (warmedUp) {
                    ready(loaded);
                } else {
                    warmedUp = true;
                    warmUp(loaded);
                }
            });
        });
    }

    /**
     * Before the replica first takes queries, as a single-model replica is warmed up
     * ({@link ReplicaWorker}): one placed model ({@link SharedPool#warmUpModel}) is loaded unless the
     * container holds it, sent an all-zeros batch of one whose time is no sample (it pays the
     * gateway's and the container's one-off costs), then one that is measured and seeds the
     * replica's transport overhead and the model's service time, and unloaded again if it was
     * loaded for this, so that the container holds what the scheduler thinks it holds. Without it the
     * replica's first live batch would measure those one-off costs as its overhead. A failure ends
     * the warm-up, and the replica takes queries all the same.
     */
    private void warmUp(List<String> held) {
        PlacedModel model = pool.warmUpModel(held);
        if (model == null) {
            ready(held);
            return;
        }
        boolean load = !held.contains(model.key());
        Duration timeout = repositoryTimeout(model);
        @SuppressWarnings("unchecked")
        TensorType<Object> type = (TensorType<Object>) model.inputType();
        (load ? client.loadModel(model.name(), model.version(), timeout) : DONE)
                .thenCompose(ignored -> client.modelMetadata(model.name(), model.version(), Duration.ofSeconds(1)))
                .thenCompose(md -> {
                    int length = md.getInputsCount() == 1 && md.getInputs(0).getShapeCount() == 2
                            && md.getInputs(0).getShape(1) > 0 ? (int) md.getInputs(0).getShape(1) : 1;
                    List<Object> zeros = List.of(ReplicaWorker.zeros(type, length));
                    return client.inferAsText(model.name(), model.version(), type, zeros, WARM_UP_TIMEOUT)
                            .thenCompose(cold -> {
                                long start = clock.getAsLong();
                                return client.inferAsText(model.name(), model.version(), type, zeros, WARM_UP_TIMEOUT)
                                        .thenAccept(result -> pool.warmedUp(id, model, result.serviceTimeNanos(),
                                                clock.getAsLong() - start));
                            });
                })
                .handle((ignored, error) -> load ? client.unloadModel(model.name(), model.version(), timeout) : DONE)
                .thenCompose(unloaded -> unloaded.handle((ignored, error) -> null))
                .whenComplete((ignored, error) -> ready(held));
    }

    private void ready(List<String> loaded) {
        ready = true;
        probing.set(false);
        pool.replicaReady(id, loaded);
    }

    /** Loads a model the scheduler placed here; reports how long the container took. */
    void load(Load load, PlacedModel model, CompletableFuture<Void> gate) {
        enqueue(true, gate, () -> {
            long start = clock.getAsLong();
            return client.loadModel(model.name(), model.version(), repositoryTimeout(model))
                    .whenComplete((ignored, error) -> {
                        if (error == null) {
                            pool.loadCompleted(load, clock.getAsLong() - start);
                        } else {
                            pool.loadFailed(load);
                            transportFailure(error);
                        }
                    });
        });
    }

    /** Unloads a model the scheduler evicted; a failure leaves the container's own LRU to make room. */
    void unload(PlacedModel model, CompletableFuture<Void> gate) {
        enqueue(true, gate, () -> client.unloadModel(model.name(), model.version(), repositoryTimeout(model)));
    }

    private static Duration repositoryTimeout(PlacedModel model) {
        return Duration.ofNanos(Math.max(MIN_REPOSITORY_TIMEOUT.toNanos(),
                model.loadNanos() * REPOSITORY_TIMEOUT_FACTOR)); // at most 10 h: the admin API caps load times at 1 h
    }

    /** Sends a batch, as one ModelInfer call per input length. */
    void send(Batch<PendingPrediction> batch, PlacedModel model, CompletableFuture<Void> gate) {
        enqueue(false, gate, () -> infer(batch, model));
    }

    private CompletableFuture<Void> infer(Batch<PendingPrediction> batch, PlacedModel model) {
        if (closed) {
            pool.failed(batch, batch.queries(), new PredictionException(DefaultReason.NO_REPLICA,
                    "replica " + id + " was removed"));
            return DONE;
        }
        long now = clock.getAsLong();
        long latestDeadline = now;
        for (Query<PendingPrediction> q : batch.queries()) {
            latestDeadline = Math.max(latestDeadline, q.deadline());
        }
        Duration timeout = Duration.ofNanos(Math.max(minBatchTimeout.toNanos(), latestDeadline - now));
        Collection<List<Query<PendingPrediction>>> groups = ReplicaWorker.byLength(batch.queries());
        AtomicInteger pending = new AtomicInteger(groups.size());
        AtomicLong serviceTime = new AtomicLong();
        List<Query<PendingPrediction>> retry = Collections.synchronizedList(new ArrayList<>());
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<Void> done = new CompletableFuture<>();
        @SuppressWarnings("unchecked")
        TensorType<Object> type = (TensorType<Object>) model.inputType();
        for (List<Query<PendingPrediction>> group : groups) {
            List<Object> inputs = new ArrayList<>(group.size());
            group.forEach(q -> inputs.add(q.payload().input));
            client.inferAsText(model.name(), model.version(), type, inputs, timeout).whenComplete((result, error) -> {
                if (error == null) {
                    serviceTime.accumulateAndGet(result.serviceTimeNanos(), Math::max);
                    List<String> outputs = result.outputs();
                    for (int i = 0; i < outputs.size(); i++) {
                        group.get(i).payload().result.complete(outputs.get(i));
                    }
                } else {
                    failures.add(error);
                    Status status = Status.fromThrowable(ReplicaWorker.unwrap(error));
                    if (status.getCode() == Status.Code.UNAVAILABLE) {
                        retry.addAll(group); // the container is gone or unreachable: another may answer
                    } else {
                        PredictionException failure = new PredictionException(DefaultReason.CONTAINER_ERROR,
                                "replica " + id + ": " + ReplicaWorker.describe(status));
                        group.forEach(q -> q.payload().result.completeExceptionally(failure));
                    }
                }
                if (pending.decrementAndGet() == 0) {
                    try {
                        if (failures.isEmpty()) {
                            pool.completed(batch, serviceTime.get());
                        } else {
                            Throwable first = failures.get(0);
                            pool.failed(batch, List.copyOf(retry), new PredictionException(
                                    DefaultReason.CONTAINER_ERROR, "replica " + id + ": " + ReplicaWorker.describe(
                                            Status.fromThrowable(ReplicaWorker.unwrap(first)))));
                            transportFailure(first);
                        }
                    } finally {
                        done.complete(null); // what follows on this replica must not wait on a failed report
                    }
                }
            });
        }
        return done;
    }

    /** An unreachable container takes nothing more until ServerReady answers again. */
    private void transportFailure(Throwable error) {
        if (Status.fromThrowable(ReplicaWorker.unwrap(error)).getCode() == Status.Code.UNAVAILABLE && ready) {
            ready = false;
            pool.availability(id, false);
            awaitReadiness();
        }
    }

    /**
     * Chains {@code op} after what it must follow and its gate: a load or unload ({@code exclusive})
     * after everything sent before, a batch after the loads and unloads sent before.
     */
    private synchronized void enqueue(boolean exclusive, CompletableFuture<Void> gate,
            Supplier<CompletableFuture<Void>> op) {
        CompletableFuture<Void> after = exclusive ? tail : barrier;
        CompletableFuture<Void> finished = CompletableFuture.allOf(after, gate)
                .thenCompose(ignored -> op.get())
                .handle((ignored, error) -> null);
        if (exclusive) {
            barrier = finished;
            tail = finished;
        } else {
            tail = CompletableFuture.allOf(tail, finished);
        }
    }

    /** Takes nothing more; calls in flight fail as the channel closes, and their queries may go elsewhere. */
    @Override
    public void close() {
        closed = true;
        client.close();
    }
}
