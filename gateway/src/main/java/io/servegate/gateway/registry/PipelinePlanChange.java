package io.servegate.gateway.registry;

import java.util.List;
import java.util.Map;

/**
 * What a pipeline plan changes in the registry, in one atomic write: every model stage's
 * deadline (the pipeline becomes planned) and the maximum batch size of each stage's model
 * version. Replica counts are the container manager's, not the registry's.
 *
 * @param pipeline       the pipeline's name
 * @param deadlineMicros each model stage's latency budget in microseconds, by stage name
 *                       (copied); stages left out keep theirs
 * @param batchCaps      the model versions' new maximum batch sizes (copied)
 */
public record PipelinePlanChange(String pipeline, Map<String, Long> deadlineMicros, List<BatchCap> batchCaps) {

    public PipelinePlanChange {
        deadlineMicros = deadlineMicros == null ? Map.of() : Map.copyOf(deadlineMicros);
        batchCaps = batchCaps == null ? List.of() : List.copyOf(batchCaps);
    }

    /**
     * A model version's new maximum batch size.
     *
     * @param modelName    the model
     * @param modelVersion the version
     * @param maxBatchSize the largest batch its scheduler sends, {@code >= 1}
     */
    public record BatchCap(String modelName, String modelVersion, int maxBatchSize) {
    }
}
