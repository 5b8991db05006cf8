package io.servegate.core.batching;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Clipper's additive-increase / multiplicative-decrease maximum batch size (NSDI'17, §4.3.1).
 *
 * <ul>
 *   <li>A batch whose latency exceeds the SLO shrinks the maximum to
 *       {@code max(1, floor(max * backoffFactor))} (default 90%: a small back-off, because the
 *       optimal size of a container does not fluctuate much).</li>
 *   <li>A batch that was <em>full</em> ({@code batchSize >= max}) and met the SLO grows the
 *       maximum by {@code additiveStep}, capped at {@code ceiling}.</li>
 *   <li>A partial batch that met the SLO changes nothing: it says nothing about whether the
 *       current maximum, let alone a larger one, would meet the SLO.</li>
 * </ul>
 *
 * <p>With a linear latency profile {@code β + α·b} the maximum settles into a saw-tooth just
 * around {@code b* = floor((SLO − β) / α)}: it climbs to {@code b* + step}, overshoots the SLO
 * once by at most {@code α·step}, and backs off by 10%.
 *
 * <p>Thread-safe and lock-free: the size lives in an {@link AtomicInteger} so the hot
 * {@link #maxBatchSize()} read never blocks.
 */
public final class AimdBatchingPolicy implements BatchingPolicy {

    /** Default initial maximum batch size: start unbatched and probe upwards. */
    public static final int DEFAULT_INITIAL_SIZE = 1;
    /** Default additive step. */
    public static final int DEFAULT_ADDITIVE_STEP = 1;
    /** Default multiplicative back-off (Clipper: reduce by 10%). */
    public static final double DEFAULT_BACKOFF_FACTOR = 0.9;
    /** Default upper bound for the maximum batch size. */
    public static final int DEFAULT_CEILING = 1024;

    private final long sloNanos;
    private final int additiveStep;
    private final double backoffFactor;
    private final int ceiling;
    private final AtomicInteger current;

    /**
     * @param sloNanos      batch latency objective in nanoseconds, {@code > 0}
     * @param initialSize   starting maximum batch size, in {@code [1, ceiling]}
     * @param additiveStep  increase per full batch that met the SLO, {@code >= 1}
     * @param backoffFactor multiplicative decrease on an SLO miss, in {@code (0, 1)}
     * @param ceiling       upper bound for the maximum batch size, {@code >= 1}
     * @throws IllegalArgumentException if an argument is out of range
     */
    public AimdBatchingPolicy(long sloNanos, int initialSize, int additiveStep,
                              double backoffFactor, int ceiling) {
        if (sloNanos <= 0) {
            throw new IllegalArgumentException("sloNanos must be > 0, got " + sloNanos);
        }
        if (ceiling < 1) {
            throw new IllegalArgumentException("ceiling must be >= 1, got " + ceiling);
        }
        if (initialSize < 1 || initialSize > ceiling) {
            throw new IllegalArgumentException(
                    "initialSize must be in [1, ceiling=" + ceiling + "], got " + initialSize);
        }
        if (additiveStep < 1) {
            throw new IllegalArgumentException("additiveStep must be >= 1, got " + additiveStep);
        }
        // Also rejects NaN, whose comparisons are all false.
        if (!(backoffFactor > 0.0 && backoffFactor < 1.0)) {
            throw new IllegalArgumentException(
                    "backoffFactor must be in (0, 1), got " + backoffFactor);
        }
        this.sloNanos = sloNanos;
        this.additiveStep = additiveStep;
        this.backoffFactor = backoffFactor;
        this.ceiling = ceiling;
        this.current = new AtomicInteger(initialSize);
    }

    /**
     * AIMD with Clipper's defaults: initial size 1, step 1, back-off 0.9, ceiling 1024.
     *
     * @param sloNanos batch latency objective in nanoseconds, {@code > 0}
     * @return a new policy
     * @throws IllegalArgumentException if {@code sloNanos <= 0}
     */
    public static AimdBatchingPolicy forSlo(long sloNanos) {
        return new AimdBatchingPolicy(sloNanos, DEFAULT_INITIAL_SIZE, DEFAULT_ADDITIVE_STEP,
                DEFAULT_BACKOFF_FACTOR, DEFAULT_CEILING);
    }

    @Override
    public int maxBatchSize() {
        return current.get();
    }

    /**
     * @throws IllegalArgumentException if {@code batchSize < 1} or {@code latencyNanos < 0}
     */
    @Override
    public void onBatchCompleted(int batchSize, long latencyNanos) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be >= 1, got " + batchSize);
        }
        if (latencyNanos < 0) {
            throw new IllegalArgumentException("latencyNanos must be >= 0, got " + latencyNanos);
        }
        if (latencyNanos > sloNanos) {
            // Back off from the current maximum even after a partial batch: if fewer queries
            // already missed the SLO, the current maximum is certainly too large.
            current.updateAndGet(max -> Math.max(1, (int) Math.floor(max * backoffFactor)));
        } else {
            // The update function must stay pure: updateAndGet may retry it under contention.
            current.updateAndGet(max -> batchSize >= max
                    ? (int) Math.min((long) max + additiveStep, ceiling)
                    : max);
        }
    }

    /** The batch latency objective in nanoseconds. */
    public long sloNanos() {
        return sloNanos;
    }

    /** The additive increase step. */
    public int additiveStep() {
        return additiveStep;
    }

    /** The multiplicative back-off factor. */
    public double backoffFactor() {
        return backoffFactor;
    }

    /** The upper bound for the maximum batch size. */
    public int ceiling() {
        return ceiling;
    }

    @Override
    public String toString() {
        return "AimdBatchingPolicy[max=" + current.get() + ", sloNanos=" + sloNanos
                + ", step=" + additiveStep + ", backoff=" + backoffFactor
                + ", ceiling=" + ceiling + "]";
    }
}
