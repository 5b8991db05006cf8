package io.servegate.gateway.tracing;

import io.grpc.Metadata;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import java.util.List;

/**
 * A batch on its way to a replica ({@code batch MODEL:VERSION}). A batch serves many queries, each
 * with a trace of its own: its span is a child of the first traced query's prediction and links
 * to every traced query's prediction, and each of those queries' {@code queue} span ends linking
 * back to it. Below it, one client span per ModelInfer call ({@link CallTrace}), whose context
 * the container receives as {@code traceparent}.
 */
public final class BatchTrace {

    static final AttributeKey<Long> TRACED = AttributeKey.longKey("servegate.batch.traced");

    private final Tracer tracer;
    private final Span span;
    private final Context context;

    private BatchTrace(Tracer tracer, Span span, Context context) {
        this.tracer = tracer;
        this.span = span;
        this.context = context;
    }

    /**
     * Starts the span of a batch of {@code size} queries, of which {@code traced} carry traces,
     * and ends those queries' queue spans; null when none is traced.
     */
    public static BatchTrace start(List<QueryTrace> traced, String model, int size, String replica, String policy) {
        if (traced.isEmpty()) {
            return null;
        }
        QueryTrace first = traced.get(0);
        SpanBuilder builder = first.tracer().spanBuilder("batch " + model).setParent(first.context())
                .setAttribute(QueryTrace.BATCH_SIZE, (long) size).setAttribute(TRACED, (long) traced.size())
                .setAttribute(QueryTrace.REPLICA, replica).setAttribute(QueryTrace.POLICY, policy);
        for (QueryTrace q : traced) {
            builder.addLink(q.spanContext());
        }
        Span span = builder.startSpan();
        for (QueryTrace q : traced) {
            q.dispatched(span.getSpanContext(), size, replica, policy);
        }
        return new BatchTrace(first.tracer(), span, first.context().with(span));
    }

    /** Starts the client span of one ModelInfer call of {@code rows} of the batch's queries. */
    public CallTrace startCall(String model, int rows) {
        Span call = tracer.spanBuilder("inference.GRPCInferenceService/ModelInfer").setSpanKind(SpanKind.CLIENT)
                .setParent(context).setAttribute(CallTrace.RPC_SYSTEM, "grpc")
                .setAttribute(CallTrace.RPC_SERVICE, "inference.GRPCInferenceService")
                .setAttribute(CallTrace.RPC_METHOD, "ModelInfer").setAttribute(QueryTrace.MODEL, model)
                .setAttribute(CallTrace.ROWS, (long) rows).startSpan();
        Metadata headers = TraceHeaders.inject(context.with(call));
        return new CallTrace(call, headers);
    }

    /** Every call of it returned; {@code failure} says what went wrong, or is null. */
    public void end(String failure) {
        if (failure != null) {
            span.setStatus(StatusCode.ERROR, failure);
        }
        span.end();
    }
}
