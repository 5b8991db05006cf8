package io.servegate.gateway.dispatch;

import io.servegate.gateway.query.PredictionException;
import java.util.concurrent.CompletableFuture;

/**
 * Where a prediction goes below the cache: a model version's replicas. {@link ReplicaPool} is
 * the real one; a simulator can put its own behind the same query path.
 */
@FunctionalInterface
public interface Dispatcher {

    /**
     * Starts predicting one input; the future completes with the output or fails with a
     * {@link PredictionException}. Work that cannot start before {@code deadlineNanos} is dropped.
     */
    CompletableFuture<String> submit(String model, String version, Object input, long deadlineNanos);
}
