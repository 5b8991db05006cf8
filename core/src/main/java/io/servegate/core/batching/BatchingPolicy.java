package io.servegate.core.batching;

/**
 * Decides the maximum batch size of one model-container replica (Clipper, NSDI'17, §4.3).
 *
 * <p>A {@link BatchQueue} asks {@link #maxBatchSize()} each time it forms a batch and reports
 * every successfully completed batch through {@link #onBatchCompleted(int, long)}, so adaptive
 * implementations can tune the size to the replica's latency profile.
 *
 * <p>Implementations must be thread-safe: a driver may call both methods from several threads.
 */
public interface BatchingPolicy {

    /** The largest batch the replica should be sent right now; always {@code >= 1}. */
    int maxBatchSize();

    /**
     * Feedback after a batch returned successfully.
     *
     * @param batchSize    number of queries in the completed batch ({@code >= 1})
     * @param latencyNanos time from dispatch to completion, in nanoseconds ({@code >= 0})
     */
    void onBatchCompleted(int batchSize, long latencyNanos);
}
