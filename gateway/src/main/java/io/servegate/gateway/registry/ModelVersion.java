package io.servegate.gateway.registry;

import io.servegate.core.scheduling.PolicyKind;
import java.util.List;

/**
 * One version of a Clipper model: which container image serves it, with which model data, and
 * how its replicas batch.
 *
 * @param name          the model name (see {@link Names#requireValid})
 * @param version       the version (same naming rule as names)
 * @param labels        free-form labels (never null; copied)
 * @param inputType     Clipper's input type name; all versions of one model share it
 * @param containerName the container (image) that serves this version; may be null
 * @param modelDataPath where the container loads the model data from; may be null
 * @param batchSize     {@code -1} for adaptive batching, {@code > 0} for a fixed batch size
 * @param scheduler     the version's scheduling policy, or {@code null} for the gateway's default
 * @param hardware      the hardware kind its replicas run on (a free name such as {@code cpu-1t}
 *                      or {@code cuda}; see {@link Names#requireValid}); profiles are stored per kind
 * @param maxBatchSize  the largest batch its scheduler sends, or {@link #DEFAULT_MAX_BATCH_SIZE}
 *                      for the gateway's {@code servegate.batching.max-batch-size}; a pipeline
 *                      plan sets it per stage
 */
public record ModelVersion(String name, String version, List<String> labels, String inputType,
                           String containerName, String modelDataPath, int batchSize, PolicyKind scheduler,
                           String hardware, int maxBatchSize) {

    /** Batch size meaning "adaptive (AIMD)". */
    public static final int ADAPTIVE_BATCH_SIZE = -1;
    /** The hardware kind of a version deployed without one. */
    public static final String DEFAULT_HARDWARE = "default";
    /** Maximum batch size meaning "the gateway's". */
    public static final int DEFAULT_MAX_BATCH_SIZE = 0;

    /**
     * Copies {@code labels} into an immutable list ({@code null} becomes empty).
     *
     * @throws NullPointerException if {@code labels} contains {@code null}
     */
    public ModelVersion {
        labels = labels == null ? List.of() : List.copyOf(labels);
        hardware = hardware == null ? DEFAULT_HARDWARE : hardware;
    }

    /** A version on the default hardware kind, with the gateway's maximum batch size. */
    public ModelVersion(String name, String version, List<String> labels, String inputType, String containerName,
            String modelDataPath, int batchSize, PolicyKind scheduler) {
        this(name, version, labels, inputType, containerName, modelDataPath, batchSize, scheduler, null,
                DEFAULT_MAX_BATCH_SIZE);
    }

    /** This version with another maximum batch size. */
    public ModelVersion withMaxBatchSize(int max) {
        return new ModelVersion(name, version, labels, inputType, containerName, modelDataPath, batchSize, scheduler,
                hardware, max);
    }

    /** A version scheduled by the gateway's default policy. */
    public ModelVersion(String name, String version, List<String> labels, String inputType, String containerName,
            String modelDataPath, int batchSize) {
        this(name, version, labels, inputType, containerName, modelDataPath, batchSize, null);
    }
}
