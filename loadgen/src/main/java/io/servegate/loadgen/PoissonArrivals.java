package io.servegate.loadgen;

import java.util.SplittableRandom;

/**
 * The arrival process of an open-loop load: a Poisson process of a given rate, i.e. independent
 * exponentially distributed gaps between intended send times, from a seeded generator so that a
 * run's schedule can be replayed. Not thread-safe: one driver thread draws the gaps.
 */
public final class PoissonArrivals implements Arrivals {

    private final double meanGapNanos;
    private final SplittableRandom random;

    /**
     * @param ratePerSecond mean arrivals per second, {@code > 0}
     * @param seed the generator's seed
     */
    public PoissonArrivals(double ratePerSecond, long seed) {
        if (!(ratePerSecond > 0) || Double.isInfinite(ratePerSecond)) {
            throw new IllegalArgumentException("rate must be positive and finite, got " + ratePerSecond);
        }
        this.meanGapNanos = 1e9 / ratePerSecond;
        this.random = new SplittableRandom(seed);
    }

    /** The mean gap between arrivals, 1 / rate, in nanoseconds. */
    public double meanGapNanos() {
        return meanGapNanos;
    }

    /** The next gap: an exponential variate of mean {@link #meanGapNanos()}, at least 0, in nanoseconds. */
    @Override
    public long nextGapNanos() {
        // 1 - u is in (0, 1], so the logarithm is finite.
        double u = 1.0 - random.nextDouble();
        return Math.round(-Math.log(u) * meanGapNanos);
    }
}
