package io.servegate.sim;

import io.servegate.core.autoscaling.ScalingDecision;
import java.util.ArrayList;
import java.util.List;

/**
 * An autoscaled model's run over time: one sample per autoscaler tick, its decisions, and the
 * replica-seconds it paid for (a replica counts from the decision that asked for it, through its
 * start, until it has drained and left).
 */
public final class ScalingTrace {

    /**
     * One tick.
     *
     * @param atS        its time, seconds
     * @param offeredRps arrivals per second since the last tick
     * @param goodRps    predictions answered in time per second since the last tick
     * @param replicas   replicas paid for (starting, serving or draining)
     * @param ready      replicas taking batches
     */
    public record Sample(double atS, double offeredRps, double goodRps, int replicas, int ready) {
    }

    final List<Sample> samples = new ArrayList<>();
    final List<ScalingDecision> decisions = new ArrayList<>();
    double replicaSeconds;

    public List<Sample> samples() {
        return List.copyOf(samples);
    }

    public List<ScalingDecision> decisions() {
        return List.copyOf(decisions);
    }

    /** Replica-seconds paid for over the run's duration. */
    public double replicaSeconds() {
        return replicaSeconds;
    }

    /** The most replicas paid for at once. */
    public int peakReplicas() {
        return samples.stream().mapToInt(Sample::replicas).max().orElse(0);
    }
}
