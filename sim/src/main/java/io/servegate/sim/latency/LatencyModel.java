package io.servegate.sim.latency;

import java.util.SplittableRandom;

/** How long an emulated replica takes to run a batch: the container's own service time. */
public interface LatencyModel {

    /** The service time of one batch of {@code size} queries, in nanoseconds (drawn from {@code random} if noisy). */
    long serviceNanos(int size, SplittableRandom random);

    /** The mean service time of a batch of {@code size}, for analytic figures and reports. */
    double meanNanos(int size);

    /**
     * When work of {@code workNanos} (a draw of {@link #serviceNanos}, or a model load) that starts
     * at {@code startNanos} of simulated time finishes: at once after it, unless the replica
     * stands still for a while ({@link StallingLatency}).
     */
    default long finishNanos(long startNanos, long workNanos) {
        return startNanos + workNanos;
    }

    /** The model for one more replica: itself, unless it keeps state of its own replica's. */
    default LatencyModel forReplica() {
        return this;
    }
}
