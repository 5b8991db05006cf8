package io.servegate.sdk;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;

/**
 * A server span per call under the caller's {@code traceparent}, from the globally registered
 * OpenTelemetry (a no-op until the container registers an SDK). Loaded only where the
 * OpenTelemetry API is on the class path ({@link CallTracing}).
 */
final class OtelCallSpans implements ServerInterceptor {

    private static final TextMapGetter<Metadata> METADATA = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Metadata carrier) {
            return carrier.keys();
        }

        @Override
        public String get(Metadata carrier, String key) {
            return carrier.get(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER));
        }
    };

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        var otel = GlobalOpenTelemetry.get();
        Context parent = otel.getPropagators().getTextMapPropagator().extract(Context.root(), headers, METADATA);
        Span span = otel.getTracer("io.servegate.sdk").spanBuilder(call.getMethodDescriptor().getFullMethodName())
                .setSpanKind(SpanKind.SERVER).setParent(parent)
                .setAttribute("rpc.system", "grpc")
                .setAttribute("rpc.service", call.getMethodDescriptor().getServiceName())
                .setAttribute("rpc.method", call.getMethodDescriptor().getBareMethodName())
                .startSpan();
        Context context = parent.with(span);
        ServerCall<Q, R> ending = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void close(Status status, Metadata trailers) {
                span.setAttribute("rpc.grpc.status_code", status.getCode().value());
                if (!status.isOk()) {
                    span.setStatus(StatusCode.ERROR, status.getCode()
                            + (status.getDescription() == null ? "" : ": " + status.getDescription()));
                }
                span.end();
                super.close(status, trailers);
            }
        };
        ServerCall.Listener<Q> listener;
        try (Scope ignored = context.makeCurrent()) {
            listener = next.startCall(ending, headers);
        }
        // each callback under the call's span, so that a predictor's own spans nest under it
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
            @Override
            public void onMessage(Q message) {
                try (Scope ignored = context.makeCurrent()) {
                    super.onMessage(message);
                }
            }

            @Override
            public void onHalfClose() {
                try (Scope ignored = context.makeCurrent()) {
                    super.onHalfClose();
                }
            }
        };
    }
}
