package io.servegate.gateway.tracing;

import io.grpc.Metadata;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import java.util.List;
import org.springframework.http.HttpHeaders;

/**
 * W3C Trace Context ({@code traceparent}, {@code tracestate}) in and out of HTTP headers and gRPC
 * metadata: what clients send the gateway, what the gateway sends its containers and the other
 * gateways of its fleet.
 */
public final class TraceHeaders {

    private static final TextMapPropagator W3C = W3CTraceContextPropagator.getInstance();
    private static final List<String> FIELDS = List.copyOf(W3C.fields());

    private static final TextMapGetter<HttpHeaders> HTTP = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(HttpHeaders carrier) {
            return carrier.headerNames();
        }

        @Override
        public String get(HttpHeaders carrier, String key) {
            return carrier == null ? null : carrier.getFirst(key);
        }
    };

    private static final TextMapGetter<Metadata> GRPC_IN = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Metadata carrier) {
            return carrier.keys();
        }

        @Override
        public String get(Metadata carrier, String key) {
            return carrier == null ? null : carrier.get(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER));
        }
    };

    private static final TextMapSetter<Metadata> GRPC_OUT = (carrier, key, value) ->
            carrier.put(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER), value);

    private TraceHeaders() {
    }

    /** The names of the headers it reads and writes. */
    public static List<String> fields() {
        return FIELDS;
    }

    /** The remote parent a request's headers name, or the root context when they name none (or a malformed one). */
    public static Context extract(HttpHeaders headers) {
        return W3C.extract(Context.root(), headers, HTTP);
    }

    /** The remote parent a call's metadata names, or the root context. */
    public static Context extract(Metadata metadata) {
        return W3C.extract(Context.root(), metadata, GRPC_IN);
    }

    /** Metadata that carries {@code context}'s span to the callee. */
    public static Metadata inject(Context context) {
        Metadata headers = new Metadata();
        W3C.inject(context, headers, GRPC_OUT);
        return headers;
    }
}
