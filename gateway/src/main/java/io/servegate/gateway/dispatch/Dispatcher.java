package io.servegate.gateway.dispatch;

import io.servegate.core.scheduling.Tenant;
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

    /**
     * As {@link #submit(String, String, Object, long)}, for {@code tenant}'s app: the model
     * version's scheduler serves higher tiers first and shares by weight when it cannot serve
     * everything. A dispatcher without tiers ignores it.
     */
    default CompletableFuture<String> submit(String model, String version, Object input, long deadlineNanos,
            Tenant tenant) {
        return submit(model, version, input, deadlineNanos);
    }

    /** Whether a model version has a replica that takes queries now; one that keeps no replicas always does. */
    default boolean ready(String model, String version) {
        return true;
    }

    /** The input a model version's containers declare, merged across them; unknown passes every input on. */
    default DeclaredInput declaredInput(String model, String version) {
        return DeclaredInput.UNKNOWN;
    }
}
