package io.servegate.sim.pipeline;

/**
 * How one pipeline stage is deployed: InferLine's three knobs.
 *
 * @param hardware the hardware kind its replicas run on (a key of the cost table and the profiles)
 * @param replicas how many replicas serve it
 * @param maxBatch the largest batch its scheduler sends; an idle replica takes up to this many queued queries
 */
public record StageConfig(String hardware, int replicas, int maxBatch) {

    public StageConfig {
        if (hardware == null || replicas < 1 || maxBatch < 1) {
            throw new IllegalArgumentException("a stage needs a hardware kind, replicas >= 1 and maxBatch >= 1");
        }
    }

    /** This stage with {@code n} replicas. */
    public StageConfig withReplicas(int n) {
        return new StageConfig(hardware, n, maxBatch);
    }

    /** This stage with batches of at most {@code b}. */
    public StageConfig withMaxBatch(int b) {
        return new StageConfig(hardware, replicas, b);
    }
}
