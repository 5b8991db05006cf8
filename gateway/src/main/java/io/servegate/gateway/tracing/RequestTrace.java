package io.servegate.gateway.tracing;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.ContextKey;
import io.opentelemetry.context.Scope;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;

/**
 * One query request's server span (HTTP or gRPC), with a {@code parse} child from the request's
 * start to its first prediction (reading the body, parsing and checking it). The request's
 * predictions start under it ({@link #predicting}); defaults and rejections are events on it. It
 * travels in the Reactor context of an HTTP request ({@link #KEY}) and in the gRPC
 * {@link io.grpc.Context} of a call ({@link #GRPC}).
 */
public final class RequestTrace {

    /** Its key in a Reactor context. */
    public static final Class<RequestTrace> KEY = RequestTrace.class;
    /** Its key in a gRPC call's context. */
    public static final io.grpc.Context.Key<RequestTrace> GRPC = io.grpc.Context.key("servegate-request-trace");

    private static final ContextKey<RequestTrace> CURRENT = ContextKey.named("servegate-request-trace");

    static final AttributeKey<String> REASON = QueryTrace.REASON;
    static final AttributeKey<String> DETAIL = AttributeKey.stringKey("servegate.default.detail");

    private final QueryTracing tracing;
    private final Span span;
    private final Context context;
    /** Open until the first prediction starts or the request ends. */
    private final AtomicReference<Span> parse;

    private final AtomicBoolean ended = new AtomicBoolean();

    RequestTrace(QueryTracing tracing, Span span, Context parent) {
        this.tracing = tracing;
        this.span = span;
        this.context = parent.with(span).with(CURRENT, this);
        this.parse = new AtomicReference<>(tracing.tracer().spanBuilder("parse").setParent(context).startSpan());
    }

    /**
     * {@code predictOne} with each prediction started under the request trace of the Reactor
     * context it is subscribed in (none: as it was).
     */
    public static <I, T> Function<I, Mono<T>> traced(Function<I, Mono<T>> predictOne) {
        return input -> Mono.deferContextual(context -> {
            RequestTrace trace = context.getOrDefault(KEY, null);
            return trace == null ? predictOne.apply(input) : trace.predicting(() -> predictOne.apply(input));
        });
    }

    /** The request trace whose predictions run on this thread now, or null. */
    public static RequestTrace current() {
        return Context.current().get(CURRENT);
    }

    /** Sets an attribute of the request's span (the app's selection policy, say). */
    public void attribute(String key, String value) {
        span.setAttribute(key, value);
    }

    /** Runs {@code prediction} (which starts predictions) with this request's span current; parsing is over. */
    public <T> T predicting(Supplier<T> prediction) {
        endParse(null);
        try (Scope ignored = context.makeCurrent()) {
            return prediction.get();
        }
    }

    /** Runs {@code record} (a latency recorded) with this request's span current, for its exemplar. */
    public void recording(Runnable record) {
        try (Scope ignored = context.makeCurrent()) {
            record.run();
        }
    }

    /** Starts a prediction of {@code model}'s version directly under the request (a forwarded query); null when off. */
    public QueryTrace startQuery(String model, String version) {
        try (Scope ignored = context.makeCurrent()) {
            return tracing.startQuery(model, version);
        }
    }

    /** Metadata that carries this request's span on (a fleet's relay to another gateway). */
    public io.grpc.Metadata headers() {
        return TraceHeaders.inject(context);
    }

    /** A query of it got its app's default output: why. */
    public void defaulted(String reason, String detail) {
        span.addEvent("default", detail == null ? Attributes.of(REASON, reason)
                : Attributes.of(REASON, reason, DETAIL, detail));
    }

    /** A query of it was refused as overload (its app's {@code overload_response} is {@code reject}). */
    public void overloadRejected(String detail) {
        span.addEvent("overload_rejected", Attributes.of(DETAIL, detail == null ? "" : detail));
    }

    /** The request is answered: {@code status} set on its span, and {@code failure} (or null) says why it failed. */
    public void end(AttributeKey<Long> statusKey, long status, String failure) {
        if (!ended.compareAndSet(false, true)) {
            return;
        }
        endParse(failure);
        span.setAttribute(statusKey, status);
        if (failure != null) {
            span.setStatus(StatusCode.ERROR, failure);
        }
        span.end();
    }

    private void endParse(String failure) {
        Span parsing = parse.getAndSet(null);
        if (parsing != null) {
            if (failure != null) {
                parsing.setStatus(StatusCode.ERROR, failure);
            }
            parsing.end();
        }
    }
}
