package io.servegate.gateway.dispatch;

import io.servegate.sdk.TensorType;

/**
 * A model version placed on a shared pool of multi-model replicas.
 *
 * @param name      the model name, as the containers serve it
 * @param version   its version
 * @param inputType what its queries carry
 * @param sizeBytes how much of a replica's memory budget it takes while loaded
 * @param loadNanos how long a replica takes to load it, as profiled; the scheduler plans loads with it
 */
public record PlacedModel(String name, String version, TensorType<?> inputType, long sizeBytes, long loadNanos) {

    /** The scheduler's name for it, {@code name:version}. */
    public String key() {
        return SharedPool.key(name, version);
    }
}
