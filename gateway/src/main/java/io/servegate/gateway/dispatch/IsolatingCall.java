package io.servegate.gateway.dispatch;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.servegate.core.scheduling.Query;
import io.servegate.gateway.registry.Names;
import io.servegate.gateway.tracing.BatchTrace;
import io.servegate.gateway.tracing.CallTrace;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.InferResult;
import io.servegate.oip.client.TensorType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;

/**
 * Sends a group of a batch's queries as ModelInfer calls to one replica so that a row the
 * container rejects fails only its own query. A container that reports
 * {@linkplain io.servegate.oip.client.RowErrors per-row errors} answers the call, and each failed
 * row's query is {@linkplain DispatchFailure#INPUT_REJECTED rejected} with the container's message.
 * A container that fails the whole call with a status that may blame the input
 * (INVALID_ARGUMENT, or UNKNOWN and INTERNAL, what a model that raises gets from most OIP
 * servers) has the group split in halves (a group of up to {@value #ROW_BY_ROW}: one query per
 * call), each sent again while some of its queries have time left, down to single queries: a single query failed with INVALID_ARGUMENT is rejected, one
 * failed otherwise gets the container's error.
 *
 * <p>What the breaker learns: a group in which some call was answered (a response, or
 * INVALID_ARGUMENT, the container blaming the input) shows a working replica, and its failed rows
 * are the clients' errors; only a group of which no call was answered is the replica's failure.
 */
final class IsolatingCall {

    /** A failed group of at most this many queries is sent again one query per call, a larger one in halves. */
    static final int ROW_BY_ROW = 4;
    /** How much of a container's message a client sees. */
    static final int MAX_MESSAGE = 300;

    /**
     * What became of a group.
     *
     * @param failure      the first error of a call that failed, or null
     * @param answered     whether the container answered some call of it (or blamed the input)
     * @param retry        queries hit by a transport failure, for another replica
     * @param serviceNanos the container's largest reported service time
     * @param isolated     whether a row was rejected or the group split: its time is no latency sample
     */
    record Outcome(Throwable failure, boolean answered, List<Query<PendingPrediction>> retry, long serviceNanos,
            boolean isolated) {

        static final Outcome NONE = new Outcome(null, false, List.of(), 0, true);

        Outcome merge(Outcome other) {
            List<Query<PendingPrediction>> both = new ArrayList<>(retry);
            both.addAll(other.retry);
            return new Outcome(failure != null ? failure : other.failure, answered || other.answered, both,
                    Math.max(serviceNanos, other.serviceNanos), isolated || other.isolated);
        }

        /** Whether the breaker counts it as the replica's error: a transport failure, or no call answered. */
        boolean replicaFailed() {
            return failure != null && (!answered || !retry.isEmpty());
        }
    }

    private final String replica;
    private final ContainerClient client;
    private final PlacedModel model;
    private final TensorType<Object> type;
    private final Duration minBatchTimeout;
    private final LongSupplier clock;
    /** Null: the replica exports no meters of its own. */
    private final ReplicaMeters meters;
    /** Null: the batch is not traced. */
    private final BatchTrace trace;

    /** @param trace the batch's trace, under which each call gets a span and passes it on; null for none */
    @SuppressWarnings("unchecked")
    IsolatingCall(String replica, ContainerClient client, PlacedModel model, Duration minBatchTimeout,
            LongSupplier clock, ReplicaMeters meters, BatchTrace trace) {
        this.replica = replica;
        this.client = client;
        this.model = model;
        this.type = (TensorType<Object>) model.inputType();
        this.minBatchTimeout = minBatchTimeout;
        this.clock = clock;
        this.meters = meters;
        this.trace = trace;
    }

    /** Sends {@code group}; every query not in the outcome's retry list is answered or failed when it completes. */
    CompletableFuture<Outcome> send(List<Query<PendingPrediction>> group) {
        long now = clock.getAsLong();
        long latestDeadline = now;
        List<Object> inputs = new ArrayList<>(group.size());
        for (Query<PendingPrediction> q : group) {
            latestDeadline = Math.max(latestDeadline, q.deadline());
            inputs.add(q.payload().input);
        }
        // late by far, not merely late: the minimum batch timeout past the latest deadline
        Duration timeout = Duration.ofNanos(minBatchTimeout.toNanos() + (latestDeadline - now));
        CallTrace call = trace == null ? null : trace.startCall(model.key(), group.size());
        return client.inferAsText(model.name(), model.version(), type, inputs, timeout,
                        call == null ? null : call.headers())
                .handle((result, error) -> {
                    if (call != null) {
                        traced(call, result, error);
                    }
                    return error == null ? CompletableFuture.completedFuture(answered(group, result))
                            : failed(group, error);
                })
                .thenCompose(outcome -> outcome);
    }

    private static void traced(CallTrace call, InferResult<String> result, Throwable error) {
        if (error == null) {
            int rejected = 0;
            for (int i = 0; i < result.outputs().size(); i++) {
                rejected += result.rowError(i) == null ? 0 : 1;
            }
            call.answered(rejected);
        } else {
            Status status = Status.fromThrowable(DispatchException.unwrap(error));
            call.failed(status, ReplicaWorker.describe(status));
        }
    }

    private Outcome answered(List<Query<PendingPrediction>> group, InferResult<String> result) {
        boolean rejected = false;
        for (int i = 0; i < group.size(); i++) {
            String error = result.rowError(i);
            if (error == null) {
                group.get(i).payload().result.complete(result.outputs().get(i));
            } else {
                reject(group.get(i), error);
                rejected = true;
            }
        }
        return new Outcome(null, true, List.of(), result.serviceTimeNanos(), rejected);
    }

    private CompletableFuture<Outcome> failed(List<Query<PendingPrediction>> group, Throwable error) {
        Status status = Status.fromThrowable(DispatchException.unwrap(error));
        Status.Code code = status.getCode();
        if (code == Status.Code.UNAVAILABLE) {
            // the container is gone or unreachable: another may answer
            return CompletableFuture.completedFuture(new Outcome(error, false, group, 0, false));
        }
        // the container's own status: an answer the client cannot decode is the replica's fault
        boolean fromContainer = DispatchException.unwrap(error) instanceof StatusRuntimeException;
        if (group.size() > 1 && fromContainer && mayBlameInput(code)) {
            return split(group);
        }
        if (code == Status.Code.INVALID_ARGUMENT) {
            group.forEach(q -> reject(q, ReplicaWorker.describe(status)));
            return CompletableFuture.completedFuture(new Outcome(error, true, List.of(), 0, true));
        }
        DispatchException failure = new DispatchException(DispatchFailure.CONTAINER_ERROR,
                "replica " + replica + ": " + ReplicaWorker.describe(status));
        group.forEach(q -> q.payload().result.completeExceptionally(failure));
        return CompletableFuture.completedFuture(new Outcome(error, false, List.of(), 0, false));
    }

    /** Whether a failed call may be one row's fault rather than the replica's. */
    static boolean mayBlameInput(Status.Code code) {
        return code == Status.Code.INVALID_ARGUMENT || code == Status.Code.UNKNOWN || code == Status.Code.INTERNAL;
    }

    /**
     * Sends each half again, or each query alone when the group is small (one round of calls
     * instead of several), without the queries whose deadline has passed (their defaults are out).
     */
    private CompletableFuture<Outcome> split(List<Query<PendingPrediction>> group) {
        if (meters != null) {
            meters.split();
        }
        int parts = group.size() <= ROW_BY_ROW ? group.size() : 2;
        CompletableFuture<Outcome> outcome = CompletableFuture.completedFuture(Outcome.NONE);
        for (int k = 0; k < parts; k++) {
            List<Query<PendingPrediction>> part = group.subList(k * group.size() / parts,
                    (k + 1) * group.size() / parts);
            outcome = outcome.thenCombine(part(part), Outcome::merge);
        }
        return outcome;
    }

    private CompletableFuture<Outcome> part(List<Query<PendingPrediction>> queries) {
        long now = clock.getAsLong();
        List<Query<PendingPrediction>> live = new ArrayList<>(queries.size());
        for (Query<PendingPrediction> q : queries) {
            if (q.deadline() > now) {
                live.add(q);
            } else {
                q.payload().result.completeExceptionally(new DispatchException(DispatchFailure.DEADLINE,
                        "its batch failed and was split, past its deadline"));
            }
        }
        return live.isEmpty() ? CompletableFuture.completedFuture(Outcome.NONE) : send(live);
    }

    private void reject(Query<PendingPrediction> query, String message) {
        if (meters != null) {
            meters.rowRejected();
        }
        query.payload().result.completeExceptionally(new DispatchException(DispatchFailure.INPUT_REJECTED,
                Names.brief(message, MAX_MESSAGE)));
    }
}
