package io.servegate.core.batching;

/**
 * A constant maximum batch size that ignores feedback. A size of 1 disables batching
 * (the "no batching" baseline of Clipper's Figure 4).
 *
 * <p>Immutable, hence thread-safe.
 */
public final class FixedBatchingPolicy implements BatchingPolicy {

    private final int batchSize;

    /**
     * @param batchSize the constant maximum batch size, {@code > 0}
     * @throws IllegalArgumentException if {@code batchSize <= 0}
     */
    public FixedBatchingPolicy(int batchSize) {
        if (batchSize <= 0) {
            throw new IllegalArgumentException("batchSize must be > 0, got " + batchSize);
        }
        this.batchSize = batchSize;
    }

    @Override
    public int maxBatchSize() {
        return batchSize;
    }

    @Override
    public void onBatchCompleted(int batchSize, long latencyNanos) {
        // Static policy: feedback is deliberately ignored.
    }

    @Override
    public String toString() {
        return "FixedBatchingPolicy[batchSize=" + batchSize + "]";
    }
}
