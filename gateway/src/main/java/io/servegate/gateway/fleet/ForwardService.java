package io.servegate.gateway.fleet;

import io.grpc.BindableService;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.context.Scope;
import io.servegate.core.scheduling.Tenant;
import io.servegate.gateway.api.RowChecks;
import io.servegate.gateway.dispatch.DeclaredInput;
import io.servegate.gateway.dispatch.DispatchException;
import io.servegate.gateway.dispatch.DispatchFailure;
import io.servegate.gateway.dispatch.Dispatcher;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Names;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.tracing.QueryTrace;
import io.servegate.gateway.tracing.RequestTrace;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelInferResponse;
import io.servegate.oip.client.TensorType;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The receiving end of {@link ForwardProtocol}: a query another gateway forwarded is checked as
 * the public endpoints check theirs ({@link RowChecks}: the same limits, the same
 * {@code INVALID_ARGUMENT} descriptions as the OIP gRPC endpoint), then scheduled here, by the
 * call's remaining deadline and for the app the sender names (checked as well: a known tier, a
 * weight in range, a valid app name; none is the default tenant), if this gateway's own view of the fleet says it owns the version
 * ({@link Ownership#accepts}). A query that reached a gateway that does not own the version is
 * relayed once to the owner this gateway knows; anything else is refused as a {@linkplain
 * ForwardProtocol#notOwner stale route}, so that the sender reads the fleet again, and a query is
 * never forwarded in circles.
 *
 * <p>While the gateway warms up, one more version is served here: the warm-up's own ({@link
 * #exercise}), under a name no registry accepts, scheduled on the warm-up's private replica pool
 * without an ownership check, so that its forwards over this port run the hop's receiving end
 * (secret, parsing, checks, scheduling, answer) and never reach a registered model or replica.
 */
public final class ForwardService implements BindableService {

    /** A query is forwarded at most this many times: to the owner its sender knew, then to the one this knows. */
    private static final int MAX_HOPS = 2;
    /** Errors quote what a request holds at most this long, as the public endpoints' do. */
    private static final int MAX_SHOWN = 1024;

    private final Registry registry;
    private final Dispatcher local;
    private final Ownership ownership;
    private final ForwardClient relay;
    private final LongSupplier clock;
    private final int maxInputLength;
    private volatile Exercise exercise;

    /**
     * The warm-up's version, served as {@code model} while the warm-up runs.
     *
     * @param model  the name its forwards carry, one that no registry accepts
     * @param served the private pool's version they are scheduled as
     * @param pool   the warm-up's private replica pool
     */
    public record Exercise(String model, ModelVersion served, Dispatcher pool) {
    }

    /** The version a forward names, and the pool that schedules it here. */
    private record Target(ModelVersion version, Dispatcher pool, boolean exercise) {
    }

    /**
     * @param local          this gateway's own replica pool
     * @param maxInputLength the public endpoints' limit on one input's elements ({@code servegate.limits.max-input-length})
     */
    public ForwardService(Registry registry, Dispatcher local, Ownership ownership, ForwardClient relay,
            LongSupplier clock, int maxInputLength) {
        this.registry = registry;
        this.local = local;
        this.ownership = ownership;
        this.relay = relay;
        this.clock = clock;
        this.maxInputLength = maxInputLength;
    }

    /** Serves the warm-up's version from now on; null stops serving it. */
    void exercise(Exercise exercise) {
        this.exercise = exercise;
    }

    /** What {@code model}:{@code version} is here: the warm-up's version, a registered one, or null. */
    private Target target(String model, String version) {
        Exercise e = exercise;
        if (e != null && e.model().equals(model) && e.served().version().equals(version)) {
            return new Target(e.served(), e.pool(), true);
        }
        ModelVersion m = registry.snapshot().model(model, version).orElse(null);
        return m == null ? null : new Target(m, local, false);
    }

    /** Whether this gateway schedules the target: by its own view of the fleet, or always for the warm-up's. */
    private CompletableFuture<Boolean> accepts(Target target, String model, String version, ModelInferRequest request) {
        return target.exercise() ? CompletableFuture.completedFuture(true)
                : ownership.accepts(model, version, ForwardProtocol.claim(request));
    }

    @Override
    public ServerServiceDefinition bindService() {
        return ServerServiceDefinition.builder(ForwardProtocol.SERVICE)
                .addMethod(ForwardProtocol.PREDICT, ServerCalls.asyncUnaryCall(this::predict))
                .addMethod(ForwardProtocol.PREDICT_MANY, ServerCalls.asyncServerStreamingCall(this::predictMany))
                .build();
    }

    private void predict(ModelInferRequest request, StreamObserver<ModelInferResponse> out) {
        Deadline deadline = Context.current().getDeadline();
        RequestTrace trace = RequestTrace.GRPC.get(); // null unless traced
        if (deadline == null) {
            out.onError(invalid("a forwarded query carries its deadline"));
            return;
        }
        long deadlineNanos = clock.getAsLong() + deadline.timeRemaining(TimeUnit.NANOSECONDS);
        String model = request.getModelName();
        String version = request.getModelVersion();
        Target target = target(model, version);
        if (target == null) {
            reply(out, ForwardProtocol.failed(DispatchFailure.NO_REPLICA, "gateway " + ownership.self()
                    + " does not know model " + Names.brief(Ownership.key(model, version), MAX_SHOWN), ownership.self()));
            return;
        }
        TensorType<?> type = TensorType.forName(target.version().inputType());
        Object input;
        try {
            input = ForwardProtocol.input(request, type);
        } catch (RuntimeException e) {
            out.onError(invalid("forwarded input: " + e.getMessage()));
            return;
        }
        Tenant tenant;
        try {
            tenant = ForwardProtocol.tenant(request);
        } catch (IllegalArgumentException e) {
            out.onError(invalid("forwarded tenant: " + e.getMessage()));
            return;
        }
        // the public endpoints' checks, in their order: the declared shape, then the row itself
        DeclaredInput declared = target.pool().declaredInput(target.version().name(), target.version().version());
        ModelInferRequest.InferInputTensor tensor = request.getInputs(0);
        String problem = declared.shapeProblem(tensor.getDatatype(), tensor.getShapeList());
        if (problem == null) {
            problem = RowChecks.problem(input, "row 0", type, declared.rowLength(), maxInputLength);
        }
        if (problem != null) {
            out.onError(invalid(problem));
            return;
        }
        int hops = ForwardProtocol.hops(request);
        Consumer<ModelInferResponse> answer = response -> reply(out, response);
        accepts(target, model, version, request).whenComplete((mine, error) -> {
            if (Boolean.TRUE.equals(mine)) {
                schedule(target, input, tenant, deadlineNanos, answer, trace,
                        () -> relayOrRefuse(model, version, type, input, tenant, hops, deadlineNanos, answer, trace));
            } else {
                relayOrRefuse(model, version, type, input, tenant, hops, deadlineNanos, answer, trace);
            }
        });
    }

    /**
     * Several queries for one version ({@link ForwardProtocol#PREDICT_MANY}): each row checked as a
     * lone forward is, each scheduled (or relayed) by its own deadline and answered as soon as it is.
     * A row outside the limits fails alone ({@link DispatchFailure#INPUT_REJECTED}); a request not
     * made of rows, or whose tensor does not fit the declared shape, is refused whole.
     */
    private void predictMany(ModelInferRequest request, StreamObserver<ModelInferResponse> out) {
        long now = clock.getAsLong();
        RequestTrace trace = RequestTrace.GRPC.get(); // null unless traced
        String model = request.getModelName();
        String version = request.getModelVersion();
        Target target = target(model, version);
        if (target == null) {
            out.onError(Status.NOT_FOUND.withDescription("gateway " + ownership.self() + " does not know model "
                    + Names.brief(Ownership.key(model, version), MAX_SHOWN)).asRuntimeException());
            return;
        }
        TensorType<?> type = TensorType.forName(target.version().inputType());
        List<?> rows;
        long[] remaining;
        try {
            rows = ForwardProtocol.rows(request, type, ForwardProtocol.MAX_ROWS);
            remaining = ForwardProtocol.remainingNanos(request);
        } catch (RuntimeException e) {
            out.onError(invalid("forwarded input: " + e.getMessage()));
            return;
        }
        List<Tenant> tenants;
        try {
            tenants = ForwardProtocol.tenants(request, rows.size());
        } catch (IllegalArgumentException e) {
            out.onError(invalid("forwarded tenant: " + e.getMessage()));
            return;
        }
        DeclaredInput declared = target.pool().declaredInput(target.version().name(), target.version().version());
        ModelInferRequest.InferInputTensor tensor = request.getInputs(0);
        String shape = declared.shapeProblem(tensor.getDatatype(), tensor.getShapeList());
        if (shape != null) {
            out.onError(invalid(shape));
            return;
        }
        Rows answers = new Rows(out, rows.size());
        accepts(target, model, version, request).whenComplete((mine, error) -> {
            for (int i = 0; i < rows.size(); i++) {
                int row = i;
                Consumer<ModelInferResponse> answer = response -> answers.answer(row, response);
                String problem = RowChecks.problem(rows.get(i), "row " + i, type, declared.rowLength(),
                        maxInputLength);
                long deadlineNanos = now + Math.max(0, remaining[i]);
                if (problem != null) {
                    answer.accept(ForwardProtocol.failed(DispatchFailure.INPUT_REJECTED,
                            Names.brief(problem, MAX_SHOWN), ownership.self()));
                } else {
                    Object input = rows.get(i);
                    Tenant tenant = tenants.get(i);
                    Runnable relay = () -> relayOrRefuse(model, version, type, input, tenant,
                            ForwardProtocol.hops(request), deadlineNanos, answer, trace);
                    if (Boolean.TRUE.equals(mine)) {
                        schedule(target, input, tenant, deadlineNanos, answer, trace, relay);
                    } else {
                        relay.run();
                    }
                }
            }
        });
    }

    /** The answers of a {@code PredictMany} call, one per row, written one at a time; the call ends with the last. */
    private static final class Rows {

        private final StreamObserver<ModelInferResponse> out;
        private int left;

        Rows(StreamObserver<ModelInferResponse> out, int rows) {
            this.out = out;
            this.left = rows;
        }

        synchronized void answer(int row, ModelInferResponse response) {
            if (out instanceof ServerCallStreamObserver<ModelInferResponse> call && call.isCancelled()) {
                return;
            }
            out.onNext(ForwardProtocol.forRow(response, row));
            if (--left == 0) {
                out.onCompleted();
            }
        }
    }

    /**
     * Schedules a forwarded query here; one still queued when this gateway hands the version on
     * goes to {@code relay} once the heartbeat that releases the version is through.
     */
    private void schedule(Target target, Object input, Tenant tenant, long deadlineNanos,
            Consumer<ModelInferResponse> out, RequestTrace trace, Runnable relay) {
        String model = target.version().name();
        String version = target.version().version();
        // the batch this may send is shared with other queries: not in this call's Context,
        // whose cancellation would cancel it
        CompletableFuture<String> output;
        QueryTrace query = trace == null ? null : trace.startQuery(model, version);
        Context previous = Context.ROOT.attach();
        try (Scope ignored = query == null ? null : query.makeCurrent()) {
            output = target.pool().submit(model, version, input, deadlineNanos, tenant);
        } finally {
            Context.ROOT.detach(previous);
        }
        output.whenComplete((value, error) -> {
            Throwable cause = DispatchException.unwrap(error);
            if (cause instanceof DispatchException e && e.failure() == DispatchFailure.MOVED) {
                if (query != null) {
                    query.failed(e.failure().name(), e.detail());
                }
                ownership.nextBeat().thenRun(relay);
                return;
            }
            ModelInferResponse response = error == null ? ForwardProtocol.answer(value, ownership.self())
                    : failed(cause);
            if (query != null) {
                if (error == null) {
                    query.answered();
                } else if (cause instanceof DispatchException e) {
                    query.failed(e.failure().name(), e.detail());
                } else {
                    query.failed(DispatchFailure.CONTAINER_ERROR.name(), String.valueOf(cause.getMessage()));
                }
            }
            out.accept(response);
        });
    }

    private void relayOrRefuse(String model, String version, TensorType<?> type, Object input, Tenant tenant, int hops,
            long deadlineNanos, Consumer<ModelInferResponse> out, RequestTrace trace) {
        Route route = ownership.route(model, version);
        long left = deadlineNanos - clock.getAsLong();
        if (route instanceof Route.Remote next && hops < MAX_HOPS && left > 0) {
            // the sender's view is a heartbeat behind this one's (a hand-off just happened): pass it on once
            relay.call(next.address(), ForwardProtocol.request(model, version, type, input, tenant, ownership.self(), next,
                    hops + 1), left, trace == null ? null : trace.headers())
                    .whenComplete((response, error) -> out.accept(error == null ? response
                            : ForwardProtocol.failed(DispatchFailure.FORWARD_FAILED, "relay to gateway "
                                    + next.member() + " failed: " + Status.fromThrowable(error).getCode(),
                                    ownership.self())));
            return;
        }
        out.accept(ForwardProtocol.notOwner("gateway " + ownership.self() + " does not schedule "
                + Ownership.key(model, version) + ": " + describe(route), ownership.self()));
    }

    private static StatusRuntimeException invalid(String description) {
        return Status.INVALID_ARGUMENT.withDescription(Names.brief(description, MAX_SHOWN)).asRuntimeException();
    }

    /** The answer for a query the dispatch layer failed with {@code cause}, unwrapped. */
    private ModelInferResponse failed(Throwable cause) {
        return cause instanceof DispatchException e
                ? ForwardProtocol.failed(e.failure(), e.detail(), ownership.self())
                : ForwardProtocol.failed(DispatchFailure.CONTAINER_ERROR, String.valueOf(cause.getMessage()),
                        ownership.self());
    }

    private static String describe(Route route) {
        if (route instanceof Route.Remote r) {
            return "its owner is " + r.member();
        }
        return route instanceof Route.Unowned u ? u.reason() : "it owns it";
    }

    private static void reply(StreamObserver<ModelInferResponse> out, ModelInferResponse response) {
        if (out instanceof ServerCallStreamObserver<ModelInferResponse> call && call.isCancelled()) {
            return;
        }
        out.onNext(response);
        out.onCompleted();
    }
}
