package io.servegate.core.scheduling;

import java.util.Objects;

/**
 * How one model version is scheduled. Times are nanoseconds.
 *
 * @param policy             the scheduling policy
 * @param sloNanos           the tightest latency objective of the apps using the model: the
 *                           target of Clipper's AIMD
 * @param maxBatchSize       no batch is larger: AIMD's ceiling, the profiles' largest size
 * @param fixedBatchSize     {@code > 0}: Clipper sends batches of this size at most and the
 *                           other policies never exceed it; {@code <= 0}: adaptive
 * @param batchWaitNanos     Clipper's delayed batching: how long an idle replica waits for a
 *                           fuller batch; 0 = off
 * @param queueCapacity      queries the model's queue holds; more are rejected as overloaded
 * @param maxAttempts        batches a query may be sent in (a second one after a transport failure)
 * @param profileWindow      service-time samples kept per replica and batch size
 * @param profileMaxAgeNanos older samples stop counting once newer ones exist
 * @param safetyMarginNanos  Clockwork and Symphony only send a batch predicted to answer at
 *                           least this long before its earliest deadline
 */
public record SchedulerConfig(PolicyKind policy, long sloNanos, int maxBatchSize, int fixedBatchSize,
        long batchWaitNanos, int queueCapacity, int maxAttempts, int profileWindow, long profileMaxAgeNanos,
        long safetyMarginNanos) {

    /** Default batch ceiling. */
    public static final int DEFAULT_MAX_BATCH_SIZE = 256;

    public SchedulerConfig {
        Objects.requireNonNull(policy, "policy");
        require(sloNanos > 0, "sloNanos must be > 0");
        require(maxBatchSize >= 1, "maxBatchSize must be >= 1");
        require(batchWaitNanos >= 0, "batchWaitNanos must be >= 0");
        require(queueCapacity >= 1, "queueCapacity must be >= 1");
        require(maxAttempts >= 1, "maxAttempts must be >= 1");
        require(profileWindow >= 1, "profileWindow must be >= 1");
        require(profileMaxAgeNanos > 0, "profileMaxAgeNanos must be > 0");
        require(safetyMarginNanos >= 0, "safetyMarginNanos must be >= 0");
    }

    /**
     * Defaults for {@code policy} at {@code sloNanos}: batches up to 256, adaptive, no batch wait,
     * 100,000 queued queries, two attempts, 16 samples per size kept for 2 s, no safety margin.
     */
    public static SchedulerConfig of(PolicyKind policy, long sloNanos) {
        return new SchedulerConfig(policy, sloNanos, DEFAULT_MAX_BATCH_SIZE, -1, 0, 100_000, 2, 16,
                2_000_000_000L, 0);
    }

    /** This configuration with another policy. */
    public SchedulerConfig withPolicy(PolicyKind p) {
        return new SchedulerConfig(p, sloNanos, maxBatchSize, fixedBatchSize, batchWaitNanos, queueCapacity,
                maxAttempts, profileWindow, profileMaxAgeNanos, safetyMarginNanos);
    }

    /** This configuration with another batch ceiling and fixed size. */
    public SchedulerConfig withBatchSizes(int max, int fixed) {
        return new SchedulerConfig(policy, sloNanos, max, fixed, batchWaitNanos, queueCapacity, maxAttempts,
                profileWindow, profileMaxAgeNanos, safetyMarginNanos);
    }

    /** This configuration with another delayed-batching window. */
    public SchedulerConfig withBatchWait(long nanos) {
        return new SchedulerConfig(policy, sloNanos, maxBatchSize, fixedBatchSize, nanos, queueCapacity, maxAttempts,
                profileWindow, profileMaxAgeNanos, safetyMarginNanos);
    }

    /** This configuration with another queue capacity. */
    public SchedulerConfig withQueueCapacity(int capacity) {
        return new SchedulerConfig(policy, sloNanos, maxBatchSize, fixedBatchSize, batchWaitNanos, capacity,
                maxAttempts, profileWindow, profileMaxAgeNanos, safetyMarginNanos);
    }

    /** This configuration with other profile window and sample age. */
    public SchedulerConfig withProfile(int window, long maxAgeNanos) {
        return new SchedulerConfig(policy, sloNanos, maxBatchSize, fixedBatchSize, batchWaitNanos, queueCapacity,
                maxAttempts, window, maxAgeNanos, safetyMarginNanos);
    }

    /** This configuration with another safety margin. */
    public SchedulerConfig withSafetyMargin(long nanos) {
        return new SchedulerConfig(policy, sloNanos, maxBatchSize, fixedBatchSize, batchWaitNanos, queueCapacity,
                maxAttempts, profileWindow, profileMaxAgeNanos, nanos);
    }

    /** The largest batch any policy may send: the fixed size when there is one, capped by the ceiling. */
    public int batchCap() {
        return fixedBatchSize > 0 ? Math.min(fixedBatchSize, maxBatchSize) : maxBatchSize;
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }
}
