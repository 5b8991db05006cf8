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
 */
public record ModelVersion(String name, String version, List<String> labels, String inputType,
                           String containerName, String modelDataPath, int batchSize, PolicyKind scheduler) {

    /** Batch size meaning "adaptive (AIMD)". */
    public static final int ADAPTIVE_BATCH_SIZE = -1;

    /**
     * Copies {@code labels} into an immutable list ({@code null} becomes empty).
     *
     * @throws NullPointerException if {@code labels} contains {@code null}
     */
    public ModelVersion {
        labels = labels == null ? List.of() : List.copyOf(labels);
    }

    /** A version scheduled by the gateway's default policy. */
    public ModelVersion(String name, String version, List<String> labels, String inputType, String containerName,
            String modelDataPath, int batchSize) {
        this(name, version, labels, inputType, containerName, modelDataPath, batchSize, null);
    }
}
