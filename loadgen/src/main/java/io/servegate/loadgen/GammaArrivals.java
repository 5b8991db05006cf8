package io.servegate.loadgen;

import org.apache.commons.math3.distribution.GammaDistribution;
import org.apache.commons.math3.random.Well19937c;

/**
 * A renewal process with Gamma-distributed gaps: shape k = 1 / CV² and mean 1 / rate, so the
 * burstiness is set independently of the rate (CV² = 1 is Poisson, larger is burstier, smaller
 * more regular), as in Clipper's and InferLine's bursty-load experiments.
 */
public final class GammaArrivals implements Arrivals {

    private final GammaDistribution gaps;

    /**
     * @param ratePerSecond mean arrivals per second, {@code > 0}
     * @param cv2 the gaps' squared coefficient of variation (variance / mean²), {@code > 0}
     * @param seed the generator's seed
     */
    public GammaArrivals(double ratePerSecond, double cv2, long seed) {
        if (!(ratePerSecond > 0) || Double.isInfinite(ratePerSecond)) {
            throw new IllegalArgumentException("rate must be positive and finite, got " + ratePerSecond);
        }
        check(cv2);
        double shape = 1 / cv2;
        double meanGapNanos = 1e9 / ratePerSecond;
        this.gaps = new GammaDistribution(new Well19937c(seed), shape, meanGapNanos / shape);
    }

    static void check(double cv2) {
        if (!(cv2 > 0) || Double.isInfinite(cv2)) {
            throw new IllegalArgumentException("CV² must be positive and finite, got " + cv2);
        }
    }

    @Override
    public long nextGapNanos() {
        return Math.round(gaps.sample());
    }
}
