package io.servegate.sim.latency;

import io.servegate.workload.arrival.Gaussian;
import java.util.SplittableRandom;

/**
 * ℓ(b) = β + α·b, optionally times lognormal noise exp(σ·Z − σ²/2), whose mean is 1, so that the
 * mean stays β + α·b at any σ.
 *
 * @param betaNanos the fixed cost of a batch
 * @param alphaNanos the cost of each query in it
 * @param sigma the noise's log-scale standard deviation; 0 for an exact model
 */
public record LinearLatency(long betaNanos, long alphaNanos, double sigma) implements LatencyModel {

    public LinearLatency {
        if (betaNanos < 0 || alphaNanos < 0 || betaNanos + alphaNanos <= 0) {
            throw new IllegalArgumentException("need beta, alpha >= 0 and beta + alpha > 0");
        }
        if (!(sigma >= 0)) {
            throw new IllegalArgumentException("sigma must be >= 0, got " + sigma);
        }
    }

    @Override
    public long serviceNanos(int size, SplittableRandom random) {
        long exact = betaNanos + alphaNanos * size;
        if (sigma == 0) {
            return exact;
        }
        return Math.max(1, Math.round(exact * Math.exp(sigma * Gaussian.next(random) - sigma * sigma / 2)));
    }

    @Override
    public double meanNanos(int size) {
        return betaNanos + (double) alphaNanos * size;
    }
}
