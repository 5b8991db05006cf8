package io.servegate.gateway.tracing;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;

/**
 * Trace ids as exemplars of the latency histograms: Prometheus' exemplar sampler asks it for the
 * span current where a latency is recorded (a query's request span, {@link RequestTrace#recording}),
 * so that a slow bucket links to a trace of a query in it. Registered only while tracing is on.
 */
public final class TraceExemplars implements io.prometheus.metrics.tracer.common.SpanContext {

    @Override
    public String getCurrentTraceId() {
        SpanContext span = Span.current().getSpanContext();
        return span.isValid() ? span.getTraceId() : null;
    }

    @Override
    public String getCurrentSpanId() {
        SpanContext span = Span.current().getSpanContext();
        return span.isValid() ? span.getSpanId() : null;
    }

    @Override
    public boolean isCurrentSpanSampled() {
        return Span.current().getSpanContext().isSampled();
    }

    @Override
    public void markCurrentSpanAsExemplar() {
        Span.current().setAttribute(EXEMPLAR_ATTRIBUTE_NAME, EXEMPLAR_ATTRIBUTE_VALUE);
    }
}
