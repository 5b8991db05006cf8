package io.servegate.gateway.tracing;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.ContextKey;
import io.opentelemetry.context.Scope;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One model version's prediction for a query, as a span ({@code predict MODEL:VERSION}) with a
 * child for its wait in the scheduler's queue ({@code queue}). It rides on the thread's
 * OpenTelemetry {@link Context} from the query layer down to the dispatcher
 * ({@link #current()}), so that no dispatch signature carries it; the batch it joins links to it
 * ({@link BatchTrace}).
 */
public final class QueryTrace {

    static final ContextKey<QueryTrace> KEY = ContextKey.named("servegate-query-trace");

    static final AttributeKey<String> MODEL = AttributeKey.stringKey("servegate.model");
    static final AttributeKey<String> VERSION = AttributeKey.stringKey("servegate.version");
    static final AttributeKey<String> CACHE = AttributeKey.stringKey("servegate.cache");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("servegate.outcome");
    static final AttributeKey<String> REASON = AttributeKey.stringKey("servegate.default.reason");
    static final AttributeKey<Long> BATCH_SIZE = AttributeKey.longKey("servegate.batch.size");
    static final AttributeKey<String> REPLICA = AttributeKey.stringKey("servegate.replica");
    static final AttributeKey<String> POLICY = AttributeKey.stringKey("servegate.policy");
    static final AttributeKey<String> MEMBER = AttributeKey.stringKey("servegate.fleet.member");

    private final Tracer tracer;
    private final Span span;
    private final Context context;
    /** The queue span while the query waits; taken by whoever ends it. */
    private final AtomicReference<Span> queue = new AtomicReference<>();

    QueryTrace(Tracer tracer, Span span, Context parent) {
        this.tracer = tracer;
        this.span = span;
        this.context = parent.with(span).with(KEY, this);
    }

    /** The query trace current on this thread, or null (tracing off, or no query here). */
    public static QueryTrace current() {
        return Context.current().get(KEY);
    }

    /** Makes it current on this thread, for the dispatcher below to find. */
    public Scope makeCurrent() {
        return context.makeCurrent();
    }

    /** How the prediction cache served it: {@code hit}, {@code miss}, or {@code pending} (another query's call). */
    public void cache(String state) {
        span.setAttribute(CACHE, state);
    }

    /** It entered its model's scheduler. */
    public void queued() {
        queue.set(tracer.spanBuilder("queue").setParent(context).startSpan());
    }

    /**
     * It left the queue in a batch ({@code batch}: that batch's span): the queue span ends and
     * links to the batch, and so does the prediction's span (once per batch, a retried query
     * joins several).
     */
    void dispatched(SpanContext batch, int size, String replica, String policy) {
        span.addLink(batch);
        Span waited = queue.getAndSet(null);
        if (waited != null) {
            waited.addLink(batch);
            waited.setAttribute(BATCH_SIZE, (long) size);
            waited.setAttribute(REPLICA, replica);
            waited.setAttribute(POLICY, policy);
            waited.end();
        }
    }

    /** Its scheduler refused or dropped it, saying why. */
    public void rejected(String why) {
        Span waited = queue.getAndSet(null);
        if (waited != null) {
            waited.setStatus(StatusCode.ERROR, why);
            waited.end();
        }
    }

    /**
     * Starts the client span of its hop to {@code member}, the gateway that schedules its model
     * version, with the metadata that carries it there.
     */
    public CallTrace startForward(String member, String service, String method) {
        Span hop = tracer.spanBuilder("forward").setSpanKind(SpanKind.CLIENT).setParent(context)
                .setAttribute(MEMBER, member).setAttribute(CallTrace.RPC_SYSTEM, "grpc")
                .setAttribute(CallTrace.RPC_SERVICE, service).setAttribute(CallTrace.RPC_METHOD, method).startSpan();
        return new CallTrace(hop, TraceHeaders.inject(context.with(hop)));
    }

    /** The container (or the owning gateway) answered it. */
    public void answered() {
        rejected("the query was answered before it left the queue");
        span.setAttribute(OUTCOME, "answered");
        span.end();
    }

    /** It got no answer: why ({@code reason}: a {@code DefaultReason}'s name) and what happened. */
    public void failed(String reason, String detail) {
        rejected("the query failed (" + reason + ") before it left the queue");
        span.setAttribute(OUTCOME, "failed");
        span.setAttribute(REASON, reason);
        span.setStatus(StatusCode.ERROR, detail == null ? reason : reason + ": " + detail);
        span.end();
    }

    Tracer tracer() {
        return tracer;
    }

    Context context() {
        return context;
    }

    SpanContext spanContext() {
        return span.getSpanContext();
    }
}
