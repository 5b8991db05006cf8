package io.servegate.sdk;

import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Continues the gateway's trace in the container. The gateway sends each ModelInfer call's W3C
 * {@code traceparent} in the call's metadata; this logs its trace id with every call that fails
 * (and, at debug level, with every call), so that a failing query can be followed from the
 * gateway's trace into the container's log. Where the OpenTelemetry API is on the class path,
 * each call also gets a server span under the gateway's ({@link OtelCallSpans}), exported by
 * whatever SDK the container registered globally.
 */
final class CallTracing implements ServerInterceptor {

    private static final Logger LOG = LoggerFactory.getLogger(CallTracing.class);
    static final Metadata.Key<String> TRACEPARENT = Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER);
    /** version 00: {@code 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>}. */
    private static final Pattern W3C = Pattern.compile("[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}");

    private final ServerInterceptor spans;

    private CallTracing(ServerInterceptor spans) {
        this.spans = spans;
    }

    /** With spans where the OpenTelemetry API is on the class path, else the log lines alone. */
    static CallTracing create() {
        return new CallTracing(otelPresent() ? new OtelCallSpans() : null);
    }

    private static boolean otelPresent() {
        try {
            Class.forName("io.opentelemetry.api.GlobalOpenTelemetry", false, CallTracing.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** The trace id of a well-formed {@code traceparent}, else null. */
    static String traceId(String traceparent) {
        return traceparent != null && W3C.matcher(traceparent).matches() ? traceparent.substring(3, 35) : null;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
            ServerCallHandler<Q, R> next) {
        String traceId = traceId(headers.get(TRACEPARENT));
        if (traceId == null) {
            return next.startCall(call, headers);
        }
        String method = call.getMethodDescriptor().getBareMethodName();
        LOG.debug("{} trace_id={}", method, traceId);
        ServerCall<Q, R> logged = new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void close(Status status, Metadata trailers) {
                if (!status.isOk()) {
                    LOG.warn("{} failed trace_id={}: {}{}", method, traceId, status.getCode(),
                            status.getDescription() == null ? "" : " " + status.getDescription());
                }
                super.close(status, trailers);
            }
        };
        return spans == null ? next.startCall(logged, headers) : spans.interceptCall(logged, headers, next);
    }
}
