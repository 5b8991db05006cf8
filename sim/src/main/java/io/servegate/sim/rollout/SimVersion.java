package io.servegate.sim.rollout;

import java.util.random.RandomGenerator;

/**
 * A simulated model version: how often its answer is right, and its latency, a fixed part plus an
 * exponential tail (so {@code P(latency > slo) = exp(-(slo - fixed) / tail)} for {@code slo > fixed}),
 * plus {@code coldMillis} on each of its first {@code coldAnswers} answers, as a freshly started
 * container's (JIT, first batch shapes).
 *
 * @param accuracy    the probability that an answer is right, in {@code [0, 1]}
 * @param fixedMillis the latency every query has
 * @param tailMillis  the mean of the exponential part, 0 for none
 * @param coldAnswers how many of its first answers are cold
 * @param coldMillis  what a cold answer takes longer
 */
public record SimVersion(double accuracy, double fixedMillis, double tailMillis, long coldAnswers,
        double coldMillis) {

    public SimVersion {
        if (!(accuracy >= 0 && accuracy <= 1) || !(fixedMillis >= 0) || !(tailMillis >= 0) || coldAnswers < 0
                || !(coldMillis >= 0)) {
            throw new IllegalArgumentException("accuracy in [0, 1] and non-negative latencies and counts required");
        }
    }

    /** A version that is never cold. */
    public SimVersion(double accuracy, double fixedMillis, double tailMillis) {
        this(accuracy, fixedMillis, tailMillis, 0, 0);
    }

    /** @return the latency in milliseconds of its answer after {@code answeredBefore} others */
    double latency(RandomGenerator rnd, long answeredBefore) {
        return fixedMillis + (answeredBefore < coldAnswers ? coldMillis : 0)
                + (tailMillis == 0 ? 0 : -tailMillis * Math.log(1 - rnd.nextDouble()));
    }

    /** @return the fraction of its warm answers slower than {@code sloMillis} */
    public double missRate(double sloMillis) {
        if (sloMillis < fixedMillis) {
            return 1;
        }
        return tailMillis == 0 ? 0 : Math.exp(-(sloMillis - fixedMillis) / tailMillis);
    }
}
