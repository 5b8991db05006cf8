package io.servegate.gateway.dispatch;

import java.util.concurrent.CompletableFuture;

/** One input waiting in its model's scheduler, with the future its queries wait on. */
final class PendingPrediction {

    final Object input;
    final CompletableFuture<String> result = new CompletableFuture<>();

    PendingPrediction(Object input) {
        this.input = input;
    }
}
