package io.servegate.core.autoscaling;

import java.util.Objects;

/**
 * One model version's autoscaler. Times are nanoseconds.
 *
 * @param minReplicas      never fewer (at least 1)
 * @param maxReplicas      never more
 * @param policy           how it decides
 * @param utilisation      the share of the capacity model's goodput planned for, in (0, 1]:
 *                         the headroom that absorbs Poisson noise and the scheduler's losses
 * @param badRateThreshold the share of queries answered late or with a default, over one tick,
 *                         above which replicas are added
 * @param idleThreshold    the replicas' idle fraction above which removing some is considered
 * @param cooldownNanos    removal waits this long after any change, and for the idle fraction to
 *                         stay above its threshold this long
 * @param settleNanos      a scale-up on the bad rate waits this long after the last one, for the
 *                         new replicas to show their effect
 * @param sloNanos         the latency objective the capacity model plans for; 0 takes the
 *                         scheduler's own (its model's SLO). A pipeline stage's autoscaler plans
 *                         for the stage's budget, a share of the end-to-end SLO.
 */
public record AutoscalerConfig(int minReplicas, int maxReplicas, AutoscalingPolicy policy, double utilisation,
        double badRateThreshold, double idleThreshold, long cooldownNanos, long settleNanos, long sloNanos) {

    public AutoscalerConfig {
        Objects.requireNonNull(policy, "policy");
        if (minReplicas < 1) {
            throw new IllegalArgumentException("min_replicas must be >= 1, got " + minReplicas);
        }
        if (maxReplicas < minReplicas) {
            throw new IllegalArgumentException(
                    "min_replicas (" + minReplicas + ") must not exceed max_replicas (" + maxReplicas + ")");
        }
        if (!(utilisation > 0 && utilisation <= 1)) {
            throw new IllegalArgumentException("utilisation must be in (0, 1], got " + utilisation);
        }
        if (!(badRateThreshold > 0 && badRateThreshold < 1)) {
            throw new IllegalArgumentException("bad_rate_threshold must be in (0, 1), got " + badRateThreshold);
        }
        if (!(idleThreshold > 0 && idleThreshold < 1)) {
            throw new IllegalArgumentException("idle_threshold must be in (0, 1), got " + idleThreshold);
        }
        if (cooldownNanos < 0 || settleNanos < 0) {
            throw new IllegalArgumentException("cooldown and settle must be >= 0");
        }
        if (sloNanos < 0) {
            throw new IllegalArgumentException("the SLO must be > 0, or 0 for the scheduler's, got " + sloNanos + " ns");
        }
    }

    /**
     * Defaults: the envelope policy, 75 % utilisation, 5 % bad rate, 30 % idle, 15 s cooldown
     * (InferLine's), 5 s settle.
     */
    public static AutoscalerConfig of(int minReplicas, int maxReplicas) {
        return new AutoscalerConfig(minReplicas, maxReplicas, AutoscalingPolicy.ENVELOPE, 0.75, 0.05, 0.3,
                15_000_000_000L, 5_000_000_000L, 0);
    }

    /** This configuration with another policy. */
    public AutoscalerConfig withPolicy(AutoscalingPolicy p) {
        return new AutoscalerConfig(minReplicas, maxReplicas, p, utilisation, badRateThreshold, idleThreshold,
                cooldownNanos, settleNanos, sloNanos);
    }

    /** This configuration with other thresholds. */
    public AutoscalerConfig withThresholds(double utilisation, double badRate, double idle) {
        return new AutoscalerConfig(minReplicas, maxReplicas, policy, utilisation, badRate, idle, cooldownNanos,
                settleNanos, sloNanos);
    }

    /** This configuration with other waits. */
    public AutoscalerConfig withTiming(long cooldownNanos, long settleNanos) {
        return new AutoscalerConfig(minReplicas, maxReplicas, policy, utilisation, badRateThreshold, idleThreshold,
                cooldownNanos, settleNanos, sloNanos);
    }

    /** This configuration planning for another latency objective (0: the scheduler's). */
    public AutoscalerConfig withSlo(long sloNanos) {
        return new AutoscalerConfig(minReplicas, maxReplicas, policy, utilisation, badRateThreshold, idleThreshold,
                cooldownNanos, settleNanos, sloNanos);
    }

    /** The objective the capacity model plans for: this configuration's, else {@code schedulerSloNanos}. */
    public long sloNanosOr(long schedulerSloNanos) {
        return sloNanos > 0 ? sloNanos : schedulerSloNanos;
    }
}
