package io.servegate.gateway.dispatch;

import io.servegate.oip.client.TensorType;

/**
 * A model version as its scheduler's replicas serve it: placed on a shared pool of multi-model
 * replicas, or served by single-model replicas of its own.
 *
 * @param name      the model name, as the containers serve it
 * @param version   its version
 * @param inputType what its queries carry
 * @param sizeBytes how much of a replica's memory budget it takes while loaded (0 on single-model replicas)
 * @param loadNanos how long a replica takes to load it, as profiled; the scheduler plans loads with
 *                  it (0 on single-model replicas)
 */
public record PlacedModel(String name, String version, TensorType<?> inputType, long sizeBytes, long loadNanos) {

    /** The scheduler's name for it, {@code name:version}. */
    public String key() {
        return key(name, version);
    }

    /** The scheduler's name for a model version, {@code name:version}. */
    static String key(String name, String version) {
        return name + ':' + version;
    }
}
