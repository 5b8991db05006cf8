package io.servegate.gateway.rpc;

import java.util.concurrent.CompletableFuture;

/** One input waiting in a replica's queue, with the future its queries wait on. */
final class PendingPrediction {

    final Object input;
    final long deadlineNanos;
    final CompletableFuture<String> result = new CompletableFuture<>();
    /** Replicas tried so far; a query moves to another replica at most once after a transport failure. */
    int attempts;

    PendingPrediction(Object input, long deadlineNanos) {
        this.input = input;
        this.deadlineNanos = deadlineNanos;
    }
}
