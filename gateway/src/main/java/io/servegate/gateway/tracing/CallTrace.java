package io.servegate.gateway.tracing;

import io.grpc.Metadata;
import io.grpc.Status;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;

/** One ModelInfer call to a container: its client span and the metadata that carries it. */
public final class CallTrace {

    static final AttributeKey<String> RPC_SYSTEM = AttributeKey.stringKey("rpc.system");
    static final AttributeKey<String> RPC_SERVICE = AttributeKey.stringKey("rpc.service");
    static final AttributeKey<String> RPC_METHOD = AttributeKey.stringKey("rpc.method");
    static final AttributeKey<Long> GRPC_STATUS = AttributeKey.longKey("rpc.grpc.status_code");
    static final AttributeKey<Long> ROWS = AttributeKey.longKey("servegate.call.rows");
    static final AttributeKey<Long> ROW_ERRORS = AttributeKey.longKey("servegate.call.row_errors");

    private final Span span;
    private final Metadata headers;

    CallTrace(Span span, Metadata headers) {
        this.span = span;
        this.headers = headers;
    }

    /** The call's {@code traceparent} (and {@code tracestate}), for the container. */
    public Metadata headers() {
        return headers;
    }

    /** The container answered; {@code rowErrors} of the rows it rejected. */
    public void answered(int rowErrors) {
        span.setAttribute(GRPC_STATUS, (long) Status.Code.OK.value());
        if (rowErrors > 0) {
            span.setAttribute(ROW_ERRORS, (long) rowErrors);
        }
        span.end();
    }

    /** The call failed with {@code status}: {@code description} says how. */
    public void failed(Status status, String description) {
        span.setAttribute(GRPC_STATUS, (long) status.getCode().value());
        span.setStatus(StatusCode.ERROR, description);
        span.end();
    }
}
