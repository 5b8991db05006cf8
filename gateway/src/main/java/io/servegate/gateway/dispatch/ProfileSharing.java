package io.servegate.gateway.dispatch;

import java.util.concurrent.CompletableFuture;

/**
 * Whether this gateway measures a model version's replicas itself. In a fleet only the gateway that
 * schedules a version profiles its replicas and publishes what it measured; the others send them no
 * profiling batch, and seed their profiles with what was published when the version comes to them.
 */
public interface ProfileSharing {

    /** A gateway alone: it schedules, and so measures, every version. */
    ProfileSharing ALONE = (model, version) -> CompletableFuture.completedFuture(true);

    /**
     * Completes with whether this gateway profiles the version's replicas, once it knows whether it
     * schedules the version (in a fleet: once the version has an owner).
     */
    CompletableFuture<Boolean> measures(String model, String version);
}
