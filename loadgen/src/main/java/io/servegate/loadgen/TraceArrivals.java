package io.servegate.loadgen;

import java.util.SplittableRandom;

/**
 * Replays a {@link RateTrace}: within second i arrivals are a Poisson process of the trace's rate
 * for that second (a piecewise-constant rate; the trace repeats if the run is longer). At a
 * second's boundary the exponential clock restarts with the new rate, which is exact because the
 * exponential distribution is memoryless. Seconds of rate 0 have no arrivals.
 */
public final class TraceArrivals implements Arrivals {

    private static final long SECOND = 1_000_000_000L;

    private final RateTrace trace;
    private final SplittableRandom random;
    /** The time of the last arrival handed out, from the start. */
    private long last;

    public TraceArrivals(RateTrace trace, long seed) {
        this.trace = trace;
        this.random = new SplittableRandom(seed);
    }

    @Override
    public long nextGapNanos() {
        long t = last;
        while (true) {
            long second = t / SECOND;
            long boundary = (second + 1) * SECOND;
            double rate = trace.rateAt(second);
            if (rate > 0) {
                long next = t + Math.round(-Math.log(1.0 - random.nextDouble()) * 1e9 / rate);
                if (next < boundary) {
                    long gap = next - last;
                    last = next;
                    return gap;
                }
            }
            t = boundary;
        }
    }
}
