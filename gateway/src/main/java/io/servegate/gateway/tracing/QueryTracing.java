package io.servegate.gateway.tracing;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;

/**
 * The gateway's tracer ({@code servegate.tracing}): it starts a request's span and, below it, a
 * span per model a query asks. {@link #OFF} starts nothing: the request path asks {@link #on()}
 * (a field read) and, when it is off, allocates nothing for tracing. What the spans are and which
 * attributes they carry: docs/tracing.md.
 */
public final class QueryTracing {

    /** Tracing off: no span, no header read or written. */
    public static final QueryTracing OFF = new QueryTracing(null);

    static final String INSTRUMENTATION = "io.servegate.gateway";

    /** Null when off. */
    private final Tracer tracer;

    private QueryTracing(Tracer tracer) {
        this.tracer = tracer;
    }

    /** Traces with {@code openTelemetry}'s tracer provider (and its sampler). */
    public static QueryTracing of(OpenTelemetry openTelemetry) {
        return new QueryTracing(openTelemetry.getTracer(INSTRUMENTATION));
    }

    /** Whether queries are traced (each one still subject to the sampler). */
    public boolean on() {
        return tracer != null;
    }

    /**
     * Starts the server span of a request whose remote parent is {@code parent} (the root context
     * when the client sent no {@code traceparent}).
     */
    public RequestTrace startRequest(String name, Context parent, Attributes attributes) {
        Span span = tracer.spanBuilder(name).setSpanKind(SpanKind.SERVER).setParent(parent)
                .setAllAttributes(attributes).startSpan();
        return new RequestTrace(this, span, parent);
    }

    /**
     * Starts the span of one model version's prediction for a query, under the span current on
     * this thread (its request's); null when off.
     */
    public QueryTrace startQuery(String model, String version) {
        if (tracer == null) {
            return null;
        }
        Context parent = Context.current();
        Span span = tracer.spanBuilder("predict " + model + ":" + version).setParent(parent)
                .setAttribute(QueryTrace.MODEL, model).setAttribute(QueryTrace.VERSION, version).startSpan();
        return new QueryTrace(tracer, span, parent);
    }

    Tracer tracer() {
        return tracer;
    }
}
