package io.servegate.gateway.dispatch;

import io.servegate.gateway.tracing.QueryTrace;
import java.util.concurrent.CompletableFuture;

/** One input waiting in its model's scheduler, with the future its queries wait on. */
final class PendingPrediction {

    final Object input;
    final CompletableFuture<String> result = new CompletableFuture<>();
    /** Its query's trace, or null (tracing off, or the query came from no traced request). */
    final QueryTrace trace;

    PendingPrediction(Object input, QueryTrace trace) {
        this.input = input;
        this.trace = trace;
    }
}
