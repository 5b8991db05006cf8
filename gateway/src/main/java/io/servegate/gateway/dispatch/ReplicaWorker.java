package io.servegate.gateway.dispatch;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.grpc.Status;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.servegate.core.scheduling.Batch;
import io.servegate.core.scheduling.Query;
import io.servegate.gateway.query.DefaultReason;
import io.servegate.gateway.query.PredictionException;
import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.sdk.ContainerClient;
import io.servegate.sdk.TensorType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import reactor.core.scheduler.Scheduler;

/**
 * The gRPC side of one replica: it checks the container is ready, warms it up and measures its
 * batches before it takes queries, then carries out the batches its model's scheduler binds to
 * it, as one OIP ModelInfer call each (one per input length). It decides nothing about
 * batching: it reports what happened (a completed batch and the container's service time, a
 * failure, a change of availability) back to the {@link ModelDispatch}.
 */
final class ReplicaWorker implements AutoCloseable {

    private final ContainerReplica replica;
    private final TensorType<Object> inputType;
    private final ModelDispatch dispatch;
    private final ContainerClient client;
    private final CircuitBreaker breaker;
    private final LongSupplier clock;
    private final Scheduler timers;
    private final Duration minBatchTimeout;
    private final int profileMaxBatch;
    private final MeterRegistry meters;
    private final List<Meter> ownMeters = new ArrayList<>();
    private final DistributionSummary batchSizes;
    /** Queries sent here whose batch has not returned. */
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile boolean ready;
    /** Whether a ServerReady poll loop runs: one at a time, however many batches failed. */
    private final AtomicBoolean probing = new AtomicBoolean();
    private volatile boolean closed;
    private volatile boolean reported;
    /** The vector length the container's metadata declares, or -1 when it declares none. */
    private volatile int inputLength = -1;

    /**
     * @param profileMaxBatch measure batches of 1, 2, 4, … up to this size before taking queries;
     *                        0 measures only the warm-up's batch of one
     */
    ReplicaWorker(ContainerReplica replica, TensorType<Object> inputType, ModelDispatch dispatch,
            ContainerClient client, CircuitBreaker breaker, LongSupplier clock, Scheduler timers,
            Duration minBatchTimeout, int profileMaxBatch, MeterRegistry meters) {
        this.replica = replica;
        this.inputType = inputType;
        this.dispatch = dispatch;
        this.client = client;
        this.breaker = breaker;
        this.clock = clock;
        this.timers = timers;
        this.minBatchTimeout = minBatchTimeout;
        this.profileMaxBatch = profileMaxBatch;
        this.meters = meters;
        Tags tags = dispatch.tags().and("replica", replica.id());
        this.batchSizes = DistributionSummary.builder("servegate.batch.size").tags(tags)
                .description("Queries per batch sent to a replica").register(meters);
        ownMeters.add(batchSizes);
        ownMeters.add(Gauge.builder("servegate.queue.length", inFlight, AtomicInteger::get).tags(tags)
                .description("Queries sent to a replica whose batch has not returned").register(meters));
        ownMeters.add(Gauge.builder("servegate.batch.max.size", this,
                        w -> w.dispatch.read(s -> s.maxBatchSize(w.replica.id())))
                .tags(tags).description("Largest batch the replica is sent now (AIMD's size under clipper)")
                .register(meters));
        ownMeters.add(Gauge.builder("servegate.replica.idle.fraction", this,
                        dispatch.replicaIdleFraction(replica.id()))
                .tags(tags).description("Share of the last 10 s the replica's container was not running a batch")
                .register(meters));
        ownMeters.add(FunctionCounter.builder("servegate.replica.busy", this,
                        w -> w.dispatch.read(s -> s.busyNanos(w.replica.id())) / 1e9)
                .tags(tags).baseUnit("seconds").description("Container time spent on completed batches")
                .register(meters));
        breaker.getEventPublisher().onStateTransition(e -> report());
    }

    ContainerReplica replica() {
        return replica;
    }

    /** Whether the scheduler may send batches here: ready, not closed, circuit not open. */
    boolean available() {
        CircuitBreaker.State state = breaker.getState();
        return ready && !closed && state != CircuitBreaker.State.OPEN && state != CircuitBreaker.State.FORCED_OPEN;
    }

    int inFlight() {
        return inFlight.get();
    }

    int inputLength() {
        return inputLength;
    }

    /** Tells the scheduler whether this replica takes batches, when that changed. */
    private synchronized void report() {
        boolean now = available();
        if (now != reported) {
            reported = now;
            dispatch.availability(replica.id(), now);
        }
    }

    /**
     * Polls OIP ServerReady until it says yes, then reads the model's input shape so that the
     * gateway can reject wrong-length inputs itself, warms the container up and measures it;
     * only then does the scheduler send batches here.
     */
    void awaitReadiness() {
        if (probing.compareAndSet(false, true)) {
            poll(true);
        }
    }

    /** After a transport failure: ServerReady again before more batches, one poll loop at a time. */
    private void awaitRecovery() {
        if (probing.compareAndSet(false, true)) {
            timers.schedule(() -> poll(false), 100, TimeUnit.MILLISECONDS);
        }
    }

    private void poll(boolean first) {
        if (closed) {
            probing.set(false);
            return;
        }
        client.serverReady(Duration.ofSeconds(1)).whenComplete((isReady, error) -> {
            if (error != null || !Boolean.TRUE.equals(isReady)) {
                timers.schedule(() -> poll(first), 500, TimeUnit.MILLISECONDS);
            } else if (!first) {
                markReady();
            } else {
                client.modelMetadata(replica.modelName(), replica.modelVersion(), Duration.ofSeconds(1))
                        .whenComplete((md, mdError) -> {
                            if (mdError == null && md.getInputsCount() == 1
                                    && md.getInputs(0).getShapeCount() == 2 && md.getInputs(0).getShape(1) > 0) {
                                inputLength = (int) md.getInputs(0).getShape(1);
                            }
                            warmUp();
                        });
            }
        });
    }

    /**
     * Sends all-zeros inputs before taking traffic, so that the container's first-call costs
     * (JIT, kernel selection, memory arenas) do not turn the first real queries into defaults, and
     * so that the scheduler knows what batches of 1, 2, 4, … cost here before it relies on that.
     * Only numeric inputs can be made up; others start cold, and their first batch is the warm-up.
     */
    private void warmUp() {
        Object zeros = zeros(inputType, Math.max(1, inputLength)); // a container that declares no length takes any
        if (zeros == null) {
            markReady();
            return;
        }
        // the first call pays the container's one-off costs: its time is not a sample
        measure(zeros, 1, false).whenComplete((ignored, error) -> profile(zeros, 1));
    }

    /** An all-zeros input of {@code length} values, or null for a type whose inputs cannot be made up (not numeric). */
    static Object zeros(TensorType<?> type, int length) {
        return switch (type.clipperName()) {
            case "ints" -> new int[length];
            case "floats" -> new float[length];
            case "doubles" -> new double[length];
            default -> null;
        };
    }

    private void profile(Object zeros, int size) {
        if (closed || size > Math.max(1, profileMaxBatch)) {
            markReady();
            return;
        }
        measure(zeros, size, true).whenComplete((ignored, error) -> {
            if (error != null) {
                markReady();
            } else {
                profile(zeros, size * 2);
            }
        });
    }

    private CompletableFuture<Void> measure(Object zeros, int size, boolean sample) {
        long start = clock.getAsLong();
        return client.inferAsText(replica.modelName(), replica.modelVersion(), inputType,
                        Collections.nCopies(size, zeros), Duration.ofSeconds(30))
                .thenAccept(result -> {
                    if (sample) {
                        dispatch.profileSample(replica.id(), size, result.serviceTimeNanos(),
                                clock.getAsLong() - start);
                    }
                });
    }

    private void markReady() {
        ready = true;
        probing.set(false);
        report();
    }

    /** Sends a batch its scheduler bound to this replica. */
    void send(Batch<PendingPrediction> batch) {
        if (closed || !breaker.tryAcquirePermission()) {
            report();
            dispatch.failed(batch, batch.queries(), new PredictionException(DefaultReason.CIRCUIT_OPEN,
                    "replica " + replica.id()));
            return;
        }
        long now = clock.getAsLong();
        long latestDeadline = now;
        for (Query<PendingPrediction> q : batch.queries()) {
            latestDeadline = Math.max(latestDeadline, q.deadline());
        }
        Duration timeout = Duration.ofNanos(Math.max(minBatchTimeout.toNanos(), latestDeadline - now));
        batchSizes.record(batch.size());
        inFlight.addAndGet(batch.size());
        // One OIP tensor holds vectors of one length: a container that declares no fixed length
        // gets one call per length, so one odd query cannot fail the batch of everyone else.
        Collection<List<Query<PendingPrediction>>> groups = byLength(batch.queries());
        AtomicInteger pending = new AtomicInteger(groups.size());
        AtomicReference<Throwable> replicaFailure = new AtomicReference<>();
        List<Query<PendingPrediction>> retry = Collections.synchronizedList(new ArrayList<>());
        AtomicLong serviceTime = new AtomicLong();
        for (List<Query<PendingPrediction>> group : groups) {
            List<Object> inputs = new ArrayList<>(group.size());
            group.forEach(q -> inputs.add(q.payload().input));
            client.inferAsText(replica.modelName(), replica.modelVersion(), inputType, inputs, timeout)
                    .whenComplete((result, error) -> {
                        if (error == null) {
                            serviceTime.accumulateAndGet(result.serviceTimeNanos(), Math::max);
                            List<String> outputs = result.outputs();
                            for (int i = 0; i < outputs.size(); i++) {
                                group.get(i).payload().result.complete(outputs.get(i));
                            }
                        } else {
                            Status status = Status.fromThrowable(unwrap(error));
                            if (status.getCode() != Status.Code.INVALID_ARGUMENT) {
                                replicaFailure.compareAndSet(null, error);
                            }
                            if (status.getCode() == Status.Code.UNAVAILABLE) {
                                retry.addAll(group); // the container is gone or unreachable: another may answer
                            } else {
                                PredictionException failure = containerError(status);
                                group.forEach(q -> q.payload().result.completeExceptionally(failure));
                            }
                        }
                        if (pending.decrementAndGet() == 0) {
                            finish(batch, replicaFailure.get(), serviceTime.get(), retry);
                        }
                    });
        }
    }

    /** Every call of a batch has returned: feed the breaker, then tell the scheduler. */
    private void finish(Batch<PendingPrediction> batch, Throwable failure, long serviceNanos,
            List<Query<PendingPrediction>> retry) {
        inFlight.addAndGet(-batch.size());
        long took = clock.getAsLong() - batch.sentAt();
        if (failure == null) {
            breaker.onSuccess(took, TimeUnit.NANOSECONDS);
            dispatch.completed(batch, serviceNanos);
            return;
        }
        breaker.onError(took, TimeUnit.NANOSECONDS, failure);
        if (!retry.isEmpty()) {
            // unreachable: take no more batches until ServerReady answers again
            ready = false;
            report();
            awaitRecovery();
        } else {
            report();
        }
        dispatch.failed(batch, List.copyOf(retry), containerError(Status.fromThrowable(unwrap(failure))));
    }

    private PredictionException containerError(Status status) {
        return new PredictionException(DefaultReason.CONTAINER_ERROR, "replica " + replica.id() + ": "
                + describe(status));
    }

    static Collection<List<Query<PendingPrediction>>> byLength(List<Query<PendingPrediction>> items) {
        Map<Integer, List<Query<PendingPrediction>>> groups = new LinkedHashMap<>();
        for (Query<PendingPrediction> q : items) {
            Object input = q.payload().input;
            int length = input instanceof float[] f ? f.length
                    : input instanceof int[] i ? i.length
                    : input instanceof double[] d ? d.length
                    : -1; // bytes and strings: one tensor takes any lengths
            groups.computeIfAbsent(length, k -> new ArrayList<>()).add(q);
        }
        return groups.values();
    }

    static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    /** Code, description and the cause's message: Status.toString() would print the cause's stack trace. */
    static String describe(Status status) {
        StringBuilder sb = new StringBuilder(status.getCode().name());
        if (status.getDescription() != null) {
            sb.append(": ").append(status.getDescription());
        }
        if (status.getCause() != null && status.getCause().getMessage() != null) {
            sb.append(" (").append(status.getCause().getMessage()).append(')');
        }
        return sb.toString();
    }

    /** Stops taking batches; those in flight fail as its channel closes, and their queries may go elsewhere. */
    @Override
    public void close() {
        closed = true;
        ownMeters.forEach(meters::remove);
        client.close();
    }
}
