package io.servegate.gateway.fleet;

import io.grpc.BindableService;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.servegate.gateway.dispatch.DispatchException;
import io.servegate.gateway.dispatch.DispatchFailure;
import io.servegate.gateway.dispatch.Dispatcher;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Registry;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelInferResponse;
import io.servegate.oip.client.TensorType;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The receiving end of {@link ForwardProtocol}: a query another gateway forwarded is scheduled
 * here, by the call's remaining deadline, if this gateway owns its model version (or the sender
 * is the owner that released the version to this one). A query that reached a gateway that no
 * longer owns the version (its sender's view was a heartbeat old) is relayed once to the owner this
 * gateway knows; anything else is refused with {@link DispatchFailure#FORWARD_FAILED}, so a query
 * is never forwarded in circles.
 */
public final class ForwardService implements BindableService {

    /** A query is forwarded at most this many times: to the owner its sender knew, then to the one this knows. */
    private static final int MAX_HOPS = 2;

    private final Registry registry;
    private final Dispatcher local;
    private final Ownership ownership;
    private final ForwardClient relay;
    private final LongSupplier clock;

    /** @param local this gateway's own replica pool */
    public ForwardService(Registry registry, Dispatcher local, Ownership ownership, ForwardClient relay,
            LongSupplier clock) {
        this.registry = registry;
        this.local = local;
        this.ownership = ownership;
        this.relay = relay;
        this.clock = clock;
    }

    @Override
    public ServerServiceDefinition bindService() {
        return ServerServiceDefinition.builder(ForwardProtocol.SERVICE)
                .addMethod(ForwardProtocol.PREDICT, ServerCalls.asyncUnaryCall(this::predict))
                .build();
    }

    private void predict(ModelInferRequest request, StreamObserver<ModelInferResponse> out) {
        Deadline deadline = Context.current().getDeadline();
        if (deadline == null) {
            out.onError(Status.INVALID_ARGUMENT.withDescription("a forwarded query carries its deadline")
                    .asRuntimeException());
            return;
        }
        long left = deadline.timeRemaining(TimeUnit.NANOSECONDS);
        String model = request.getModelName();
        String version = request.getModelVersion();
        ModelVersion m = registry.snapshot().model(model, version).orElse(null);
        if (m == null) {
            reply(out, ForwardProtocol.failed(DispatchFailure.NO_REPLICA, "gateway " + ownership.self()
                    + " does not know model " + Ownership.key(model, version), ownership.self()));
            return;
        }
        Object input;
        try {
            input = ForwardProtocol.input(request, TensorType.forName(m.inputType()));
        } catch (RuntimeException e) {
            out.onError(Status.INVALID_ARGUMENT.withDescription("forwarded input: " + e.getMessage())
                    .asRuntimeException());
            return;
        }
        int hops = ForwardProtocol.hops(request);
        if (ownership.accepts(model, version, ForwardProtocol.claim(request))) {
            // the batch this may send is shared with other queries: not in this call's Context,
            // whose cancellation would cancel it
            CompletableFuture<String> output;
            Context previous = Context.ROOT.attach();
            try {
                output = local.submit(model, version, input, clock.getAsLong() + left);
            } finally {
                Context.ROOT.detach(previous);
            }
            output.whenComplete((value, error) -> reply(out, error == null
                    ? ForwardProtocol.answer(value, ownership.self()) : failed(error)));
            return;
        }
        Route route = ownership.route(model, version);
        if (route instanceof Route.Remote next && hops < MAX_HOPS) {
            // the sender's view is a heartbeat behind this one's (a hand-off just happened): pass it on once
            relay.call(next.address(), ForwardProtocol.request(model, version, TensorType.forName(m.inputType()),
                    input, ownership.self(), next, hops + 1), left)
                    .whenComplete((response, error) -> reply(out, error == null ? response
                            : ForwardProtocol.failed(DispatchFailure.FORWARD_FAILED, "relay to gateway "
                                    + next.member() + " failed: " + Status.fromThrowable(error).getCode(),
                                    ownership.self())));
            return;
        }
        reply(out, ForwardProtocol.failed(DispatchFailure.FORWARD_FAILED, "gateway " + ownership.self()
                + " does not schedule " + Ownership.key(model, version) + ": " + describe(route), ownership.self()));
    }

    private ModelInferResponse failed(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
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
