package io.servegate.gateway.rpc;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.grpc.Status;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.servegate.gateway.batching.Batch;
import io.servegate.gateway.batching.BatchQueue;
import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.sdk.ContainerClient;
import io.servegate.sdk.TensorType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;
import reactor.core.scheduler.Scheduler;

/**
 * Drives one replica's {@link BatchQueue}: forms batches, sends each as one OIP ModelInfer call,
 * completes the queries, and feeds latencies back to the batching policy. At most one batch is
 * in flight (Clipper §4.3). The queue decides; this class only does the I/O and the timers, so
 * a simulator can drive the same queue without it.
 */
final class ReplicaWorker implements AutoCloseable {

    private final ContainerReplica replica;
    private final TensorType<Object> inputType;
    private final BatchQueue<PendingPrediction> queue;
    private final ContainerClient client;
    private final CircuitBreaker breaker;
    private final LongSupplier clock;
    private final Scheduler timers;
    private final Duration minBatchTimeout;
    private final BiConsumer<PendingPrediction, ReplicaWorker> onTransportFailure;
    private final MeterRegistry meters;
    private final List<Meter> ownMeters = new ArrayList<>();
    private final DistributionSummary batchSizes;

    private final AtomicInteger wip = new AtomicInteger();
    /** When the pending wake-up timer fires, or Long.MAX_VALUE when none is set. */
    private final AtomicLong wakeupAt = new AtomicLong(Long.MAX_VALUE);
    private volatile boolean ready;
    private volatile boolean closed;
    /** The vector length the container's metadata declares, or -1 when it declares none. */
    private volatile int inputLength = -1;

    ReplicaWorker(ContainerReplica replica, TensorType<Object> inputType, BatchQueue<PendingPrediction> queue,
            ContainerClient client, CircuitBreaker breaker, LongSupplier clock, Scheduler timers,
            Duration minBatchTimeout, BiConsumer<PendingPrediction, ReplicaWorker> onTransportFailure,
            MeterRegistry meters) {
        this.replica = replica;
        this.inputType = inputType;
        this.queue = queue;
        this.client = client;
        this.breaker = breaker;
        this.clock = clock;
        this.timers = timers;
        this.minBatchTimeout = minBatchTimeout;
        this.onTransportFailure = onTransportFailure;
        this.meters = meters;
        Tags tags = Tags.of("model", replica.modelName(), "version", replica.modelVersion(), "replica", replica.id());
        this.batchSizes = DistributionSummary.builder("servegate.batch.size").tags(tags)
                .description("Queries per batch sent to a replica").register(meters);
        ownMeters.add(batchSizes);
        ownMeters.add(Gauge.builder("servegate.queue.length", queue, BatchQueue::size).tags(tags)
                .description("Queries waiting in a replica's batching queue").register(meters));
        ownMeters.add(Gauge.builder("servegate.batch.max.size", queue, q -> q.policy().maxBatchSize()).tags(tags)
                .description("Current maximum batch size (AIMD or fixed)").register(meters));
    }

    ContainerReplica replica() {
        return replica;
    }

    BatchQueue<PendingPrediction> queue() {
        return queue;
    }

    /** Whether queries may be routed here: ready, not closed, circuit not open. */
    boolean available() {
        return ready && !closed && breaker.getState() != CircuitBreaker.State.OPEN
                && breaker.getState() != CircuitBreaker.State.FORCED_OPEN;
    }

    int load() {
        return queue.load();
    }

    int inputLength() {
        return inputLength;
    }

    /**
     * Polls OIP ServerReady until it says yes, then reads the model's input shape so that the
     * gateway can reject wrong-length inputs itself; queries are routed here only after that.
     */
    void awaitReadiness() {
        if (closed) {
            return;
        }
        client.serverReady(Duration.ofSeconds(1)).whenComplete((isReady, error) -> {
            if (error == null && Boolean.TRUE.equals(isReady)) {
                client.modelMetadata(replica.modelName(), replica.modelVersion(), Duration.ofSeconds(1))
                        .whenComplete((md, mdError) -> {
                            if (mdError == null && md.getInputsCount() == 1
                                    && md.getInputs(0).getShapeCount() == 2 && md.getInputs(0).getShape(1) > 0) {
                                inputLength = (int) md.getInputs(0).getShape(1);
                            }
                            warmUp();
                        });
            } else if (!closed) {
                timers.schedule(this::awaitReadiness, 500, TimeUnit.MILLISECONDS);
            }
        });
    }

    /**
     * Sends one all-zeros input before taking traffic, so that the container's first-call costs
     * (JIT, kernel selection, memory arenas) do not turn the first real queries into defaults.
     * Only numeric inputs of known length can be made up; others start cold.
     */
    private void warmUp() {
        Object zeros = switch (inputType.clipperName()) {
            case "ints" -> inputLength > 0 ? new int[inputLength] : null;
            case "floats" -> inputLength > 0 ? new float[inputLength] : null;
            case "doubles" -> inputLength > 0 ? new double[inputLength] : null;
            default -> null;
        };
        if (zeros == null) {
            ready = true;
            return;
        }
        client.inferAsText(replica.modelName(), replica.modelVersion(), inputType, List.of(zeros),
                Duration.ofSeconds(30)).whenComplete((result, error) -> ready = true);
    }

    /** Queues a prediction; false when the queue is full. */
    boolean offer(PendingPrediction p) {
        if (closed) {
            return false;
        }
        // counted before the offer: once queued, another thread may dispatch and fail it at once
        p.attempts++;
        if (!queue.offer(p, p.deadlineNanos, clock.getAsLong())) {
            p.attempts--;
            return false;
        }
        pump();
        return true;
    }

    /** Dispatches what can be dispatched now and arms a timer for the next moment that matters. */
    void pump() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        do {
            long now = clock.getAsLong();
            Batch<PendingPrediction> batch = queue.tryDispatch(now, ReplicaWorker::expire);
            if (batch != null) {
                send(batch, now);
            } else {
                armTimer(queue.nextDispatchTime(now), now);
            }
        } while (wip.decrementAndGet() != 0);
    }

    private void armTimer(long at, long now) {
        if (at == Long.MAX_VALUE || closed) {
            return;
        }
        long current = wakeupAt.get();
        if (current <= at && current > now) {
            return; // an earlier or equal timer is already armed
        }
        wakeupAt.set(at);
        timers.schedule(() -> {
            wakeupAt.compareAndSet(at, Long.MAX_VALUE);
            pump();
        }, Math.max(0, at - now), TimeUnit.NANOSECONDS);
    }

    private void send(Batch<PendingPrediction> batch, long now) {
        if (!breaker.tryAcquirePermission()) {
            queue.fail(batch, now);
            PredictionException open = new PredictionException(DefaultReason.CIRCUIT_OPEN, "replica " + replica.id());
            batch.items().forEach(p -> retryElsewhereOrFail(p, open));
            return;
        }
        long latestDeadline = now;
        for (PendingPrediction p : batch.items()) {
            latestDeadline = Math.max(latestDeadline, p.deadlineNanos);
        }
        Duration timeout = Duration.ofNanos(Math.max(minBatchTimeout.toNanos(), latestDeadline - now));
        batchSizes.record(batch.size());
        // One OIP tensor holds vectors of one length: a container that declares no fixed length
        // gets one call per length, so one odd query cannot fail the batch of everyone else.
        Collection<List<PendingPrediction>> groups = byLength(batch.items());
        AtomicInteger pending = new AtomicInteger(groups.size());
        AtomicReference<Throwable> replicaFailure = new AtomicReference<>();
        AtomicLong serviceTime = new AtomicLong();
        for (List<PendingPrediction> group : groups) {
            List<Object> inputs = new ArrayList<>(group.size());
            group.forEach(p -> inputs.add(p.input));
            client.inferAsText(replica.modelName(), replica.modelVersion(), inputType, inputs, timeout)
                    .whenComplete((result, error) -> {
                        if (error == null) {
                            serviceTime.accumulateAndGet(result.serviceTimeNanos(), Math::max);
                            List<String> outputs = result.outputs();
                            for (int i = 0; i < outputs.size(); i++) {
                                group.get(i).result.complete(outputs.get(i));
                            }
                        } else {
                            if (!rejectedInput(error)) {
                                replicaFailure.compareAndSet(null, error);
                            }
                            group.forEach(p -> retryElsewhereOrFail(p, error));
                        }
                        if (pending.decrementAndGet() == 0) {
                            finish(batch, replicaFailure.get(), serviceTime.get());
                        }
                    });
        }
    }

    /** Every call of a batch has returned: feed the breaker and the queue, then send the next batch. */
    private void finish(Batch<PendingPrediction> batch, Throwable failure, long serviceTimeNanos) {
        long end = clock.getAsLong();
        long took = end - batch.dispatchedAt();
        if (failure == null) {
            breaker.onSuccess(took, TimeUnit.NANOSECONDS);
            // AIMD learns from the container's own service time when it reports one (ours do;
            // Triton does not): a gateway short of CPU must not shrink batches, which would
            // only cut throughput further
            queue.complete(batch, end, serviceTimeNanos > 0 ? serviceTimeNanos : took);
        } else {
            breaker.onError(took, TimeUnit.NANOSECONDS, failure);
            queue.fail(batch, end);
        }
        pump();
    }

    private static Collection<List<PendingPrediction>> byLength(List<PendingPrediction> items) {
        Map<Integer, List<PendingPrediction>> groups = new LinkedHashMap<>();
        for (PendingPrediction p : items) {
            int length = p.input instanceof float[] f ? f.length
                    : p.input instanceof int[] i ? i.length
                    : p.input instanceof double[] d ? d.length
                    : -1; // bytes and strings: one tensor takes any lengths
            groups.computeIfAbsent(length, k -> new ArrayList<>()).add(p);
        }
        return groups.values();
    }

    /** The container refused the inputs themselves: the caller's fault, not a sign the replica is failing. */
    private static boolean rejectedInput(Throwable error) {
        Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                ? error.getCause() : error;
        return Status.fromThrowable(cause).getCode() == Status.Code.INVALID_ARGUMENT;
    }

    private void retryElsewhereOrFail(PendingPrediction p, Throwable error) {
        Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                ? error.getCause() : error;
        boolean transport = cause instanceof PredictionException
                || Status.fromThrowable(cause).getCode() == Status.Code.UNAVAILABLE;
        if (transport && p.attempts < 2 && clock.getAsLong() < p.deadlineNanos) {
            onTransportFailure.accept(p, this);
        } else {
            p.result.completeExceptionally(cause instanceof PredictionException pe ? pe
                    : new PredictionException(DefaultReason.CONTAINER_ERROR,
                            "replica " + replica.id() + ": " + describe(Status.fromThrowable(cause))));
        }
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

    private static void expire(PendingPrediction p) {
        p.result.completeExceptionally(new PredictionException(DefaultReason.DEADLINE, null));
    }

    /** Stops routing here and hands queued predictions back for another replica or a default. */
    @Override
    public void close() {
        closed = true;
        PredictionException gone = new PredictionException(DefaultReason.NO_REPLICA,
                "replica " + replica.id() + " was removed");
        queue.drain().forEach(p -> retryElsewhereOrFail(p, gone));
        ownMeters.forEach(meters::remove);
        client.close();
    }
}
