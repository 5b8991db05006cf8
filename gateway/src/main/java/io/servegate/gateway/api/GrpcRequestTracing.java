package io.servegate.gateway.api;

import io.grpc.Contexts;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.servegate.gateway.tracing.QueryTracing;
import io.servegate.gateway.tracing.RequestTrace;
import io.servegate.gateway.tracing.TraceHeaders;
import java.util.Set;

/**
 * The server span of each call of the traced gRPC methods (OIP ModelInfer, a fleet's forwarded
 * Predict), continuing the caller's {@code traceparent}; the call's {@link RequestTrace} is in
 * its gRPC context ({@link RequestTrace#GRPC}). A call that fails says why on its span.
 */
public final class GrpcRequestTracing implements ServerInterceptor {

    static final AttributeKey<String> RPC_SYSTEM = AttributeKey.stringKey("rpc.system");
    static final AttributeKey<String> RPC_SERVICE = AttributeKey.stringKey("rpc.service");
    static final AttributeKey<String> RPC_METHOD = AttributeKey.stringKey("rpc.method");
    static final AttributeKey<Long> STATUS = AttributeKey.longKey("rpc.grpc.status_code");

    private final QueryTracing tracing;
    private final Set<String> methods;

    /** @param methods the full names of the methods traced ({@code service/method}) */
    public GrpcRequestTracing(QueryTracing tracing, Set<String> methods) {
        this.tracing = tracing;
        this.methods = Set.copyOf(methods);
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        String method = call.getMethodDescriptor().getFullMethodName();
        if (!tracing.on() || !methods.contains(method)) {
            return next.startCall(call, headers);
        }
        RequestTrace trace = tracing.startRequest(method, TraceHeaders.extract(headers), Attributes.of(RPC_SYSTEM,
                "grpc", RPC_SERVICE, call.getMethodDescriptor().getServiceName(),
                RPC_METHOD, call.getMethodDescriptor().getBareMethodName()));
        ServerCall<Q, R> traced = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void close(Status status, Metadata trailers) {
                trace.end(STATUS, status.getCode().value(), status.isOk() ? null
                        : status.getCode() + (status.getDescription() == null ? "" : ": " + status.getDescription()));
                super.close(status, trailers);
            }
        };
        ServerCall.Listener<Q> listener = Contexts.interceptCall(
                io.grpc.Context.current().withValue(RequestTrace.GRPC, trace), traced, headers, next);
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
            @Override
            public void onCancel() {
                trace.end(STATUS, Status.Code.CANCELLED.value(), "the caller cancelled the call");
                super.onCancel();
            }
        };
    }
}
