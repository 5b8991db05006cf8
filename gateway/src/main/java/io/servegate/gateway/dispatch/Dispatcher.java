package io.servegate.gateway.dispatch;

import java.util.concurrent.CompletableFuture;

/**
 * Where a prediction goes below the cache: a model version's replicas. {@link ReplicaPool} is
 * the real one; a simulator can put its own behind the same query path.
 */
@FunctionalInterface
public interface Dispatcher {

    /**
     * Starts predicting one input; the future completes with the output or fails with a
     * {@link DispatchException}. Work that cannot start before {@code deadlineNanos} is dropped.
     */
    CompletableFuture<String> submit(String model, String version, Object input, long deadlineNanos);

    /** Whether a model version has a replica that takes queries now; one that keeps no replicas always does. */
    default boolean ready(String model, String version) {
        return true;
    }

    /** The input a model version's containers declare, merged across them; unknown passes every input on. */
    default DeclaredInput declaredInput(String model, String version) {
        return DeclaredInput.UNKNOWN;
    }
}
