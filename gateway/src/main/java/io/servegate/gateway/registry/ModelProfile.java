package io.servegate.gateway.registry;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A model version's measured service time per batch size on one hardware kind: InferLine's
 * profile, which the pipeline planner reads. One replica was sent batches of 1, 2, 4, … one at
 * a time; the registry keeps one profile per model version and hardware kind, the latest.
 *
 * @param modelName     the model
 * @param modelVersion  the version
 * @param hardware      the hardware kind of the replica measured ({@link ModelVersion#hardware()})
 * @param replicaId     the replica measured
 * @param address       its address
 * @param measuredAt    when the measurement ended
 * @param samples       measured batches per size (after unrecorded warm-up batches)
 * @param roundTrip     whether times are client round trips (the container reported no service time)
 * @param batches       one entry per batch size, in increasing size (never empty; copied)
 */
public record ModelProfile(String modelName, String modelVersion, String hardware, String replicaId, String address,
        Instant measuredAt, int samples, boolean roundTrip, List<BatchLatency> batches) {

    public ModelProfile {
        Objects.requireNonNull(measuredAt, "measuredAt");
        batches = batches == null ? List.of() : List.copyOf(batches);
    }

    /**
     * The service time of one batch size.
     *
     * @param batchSize the batch size
     * @param meanMs    mean service time, milliseconds
     * @param p99Ms     99th percentile, milliseconds
     */
    public record BatchLatency(int batchSize, double meanMs, double p99Ms) {
    }

    /** The registry's key: {@code name:version:hardware} (names never contain a colon). */
    public String key() {
        return modelName + ":" + modelVersion + ":" + hardware;
    }
}
