package io.servegate.sim.rollout;

import java.util.random.RandomGenerator;

/**
 * A simulated model version: how often its answer is right, and its latency, a fixed part plus an
 * exponential tail (so {@code P(latency > slo) = exp(-(slo - fixed) / tail)} for {@code slo > fixed}).
 *
 * @param accuracy    the probability that an answer is right, in {@code [0, 1]}
 * @param fixedMillis the latency every query has
 * @param tailMillis  the mean of the exponential part, 0 for none
 */
public record SimVersion(double accuracy, double fixedMillis, double tailMillis) {

    public SimVersion {
        if (!(accuracy >= 0 && accuracy <= 1) || !(fixedMillis >= 0) || !(tailMillis >= 0)) {
            throw new IllegalArgumentException("accuracy in [0, 1] and non-negative latencies required");
        }
    }

    /** @return one query's latency in milliseconds */
    double latency(RandomGenerator rnd) {
        return fixedMillis + (tailMillis == 0 ? 0 : -tailMillis * Math.log(1 - rnd.nextDouble()));
    }

    /** @return the fraction of queries slower than {@code sloMillis} */
    public double missRate(double sloMillis) {
        if (sloMillis < fixedMillis) {
            return 1;
        }
        return tailMillis == 0 ? 0 : Math.exp(-(sloMillis - fixedMillis) / tailMillis);
    }
}
