package io.servegate.gateway.fleet;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.core.scheduling.Tenant;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelInferResponse;
import io.servegate.oip.client.TensorType;
import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.LongSupplier;

/**
 * Coalesces the queries this gateway forwards: the queries for one model version routed to the
 * same owner that arrive before the batcher's thread gets to them (a request's
 * {@code input_batch}, a burst from many clients) go in one {@link ForwardProtocol#PREDICT_MANY}
 * call, whose answers stream back one per row as the owner's scheduler answers each, so no query
 * waits for another's answer. There is no timer window: a query waits only for that thread to run,
 * and a lone query goes as a plain {@code Predict}. A call holds at most
 * {@value ForwardProtocol#MAX_ROWS} rows and about half the largest message a gateway accepts;
 * a row whose deadline passed while it waited is failed, not sent. An owner that does not know
 * {@code PredictMany} (an older gateway during a rolling update) is sent each row by {@code Predict}.
 * A lone query carries its trace context to the owner; a coalesced call, which serves many traces,
 * carries none (each query's own forward span still times its hop).
 */
final class ForwardBatcher implements AutoCloseable {

    private final ForwardClient client;
    private final Ownership ownership;
    private final LongSupplier clock;
    private final long maxBytes;
    private final ConcurrentHashMap<Key, List<Waiting>> waiting = new ConcurrentHashMap<>();
    private final ExecutorService sender = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "servegate-fleet-forward");
        t.setDaemon(true);
        return t;
    });
    private final DistributionSummary queriesPerCall;

    private record Key(Route.Remote to, String model, String version, TensorType<?> type) {
    }

    private record Waiting(Object input, Tenant tenant, long deadlineNanos, Metadata trace, CompletableFuture<ModelInferResponse> answer) {
    }

    /**
     * @param ownership       names this gateway as the forwarding member
     * @param maxMessageBytes the largest message a gateway accepts ({@code servegate.limits.max-body-size})
     */
    ForwardBatcher(ForwardClient client, Ownership ownership, LongSupplier clock, int maxMessageBytes, MeterRegistry meters) {
        this.client = client;
        this.ownership = ownership;
        this.clock = clock;
        this.maxBytes = maxMessageBytes / 2;
        this.queriesPerCall = DistributionSummary.builder("servegate.fleet.forward.queries")
                .description("Queries per call forwarded to an owning gateway (coalesced per owner and model version)")
                .register(meters);
    }

    /**
     * The owner's answer to {@code input}, forwarded for {@code tenant}'s app with what remains of {@code deadlineNanos};
     * {@code trace} (a trace context, or null) goes with it when it is sent alone.
     */
    CompletableFuture<ModelInferResponse> forward(Route.Remote to, String model, String version, TensorType<?> type,
            Object input, Tenant tenant, long deadlineNanos, Metadata trace) {
        CompletableFuture<ModelInferResponse> answer = new CompletableFuture<>();
        Key key = new Key(to, model, version, type);
        boolean[] first = {false};
        waiting.compute(key, (k, rows) -> {
            if (rows == null) {
                rows = new ArrayList<>();
                first[0] = true;
            }
            rows.add(new Waiting(input, tenant, deadlineNanos, trace, answer));
            return rows;
        });
        if (first[0]) {
            sender.execute(() -> send(key));
        }
        return answer;
    }

    private void send(Key key) {
        List<Waiting> rows = waiting.remove(key);
        long now = clock.getAsLong();
        List<Waiting> call = new ArrayList<>();
        long bytes = 0;
        for (Waiting w : rows) {
            if (w.deadlineNanos - now <= 0) {
                w.answer.completeExceptionally(Status.DEADLINE_EXCEEDED
                        .withDescription("the deadline passed before the query was forwarded").asRuntimeException());
                continue;
            }
            long size = bytes(w.input);
            if (!call.isEmpty() && (call.size() == ForwardProtocol.MAX_ROWS || bytes + size > maxBytes)) {
                call(key, call, now);
                call = new ArrayList<>();
                bytes = 0;
            }
            call.add(w);
            bytes += size;
        }
        if (!call.isEmpty()) {
            call(key, call, now);
        }
    }

    private void call(Key key, List<Waiting> rows, long now) {
        queriesPerCall.record(rows.size());
        if (rows.size() == 1) {
            one(key, rows.get(0));
            return;
        }
        long[] remaining = new long[rows.size()];
        long most = 0;
        List<Object> inputs = new ArrayList<>(rows.size());
        List<Tenant> tenants = new ArrayList<>(rows.size());
        for (int i = 0; i < rows.size(); i++) {
            remaining[i] = rows.get(i).deadlineNanos - now;
            most = Math.max(most, remaining[i]);
            inputs.add(rows.get(i).input);
            tenants.add(rows.get(i).tenant);
        }
        ModelInferRequest request = ForwardProtocol.requestMany(key.model, key.version, key.type, inputs, tenants,
                remaining, ownership.self(), key.to);
        client.callMany(key.to.address(), request, most, new StreamObserver<>() {
            @Override
            public void onNext(ModelInferResponse response) {
                long row = ForwardProtocol.row(response);
                if (row >= 0 && row < rows.size()) {
                    rows.get((int) row).answer.complete(response);
                }
            }

            @Override
            public void onError(Throwable t) {
                if (Status.fromThrowable(t).getCode() == Status.Code.UNIMPLEMENTED) {
                    rows.stream().filter(w -> !w.answer.isDone()).forEach(w -> one(key, w));
                    return;
                }
                rows.forEach(w -> w.answer.completeExceptionally(t));
            }

            @Override
            public void onCompleted() {
                rows.forEach(w -> w.answer.completeExceptionally(
                        new IllegalStateException("the gateway sent no answer for the query")));
            }
        });
    }

    /** One query by {@code Predict}. */
    private void one(Key key, Waiting w) {
        long left = w.deadlineNanos - clock.getAsLong();
        if (left <= 0) {
            w.answer.completeExceptionally(Status.DEADLINE_EXCEEDED
                    .withDescription("the deadline passed before the query was forwarded").asRuntimeException());
            return;
        }
        client.call(key.to.address(), ForwardProtocol.request(key.model, key.version, key.type, w.input,
                w.tenant, ownership.self(), key.to, 1), left, w.trace).whenComplete((response, error) -> {
                    if (error != null) {
                        w.answer.completeExceptionally(error);
                    } else {
                        w.answer.complete(response);
                    }
                });
    }

    /** About the bytes a row takes in a request. */
    private static long bytes(Object row) {
        return row instanceof byte[] b ? b.length
                : row instanceof String s ? 3L * s.length()
                : 8L * Array.getLength(row);
    }

    @Override
    public void close() {
        sender.shutdownNow();
    }
}
