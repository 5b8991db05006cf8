package io.servegate.workload.arrival;

import java.util.SplittableRandom;

/** When queries arrive: a point process on the virtual clock. */
public interface ArrivalProcess {

    /**
     * The next arrival strictly after the previous one at {@code previous} (the first call gets
     * the run's start, 0), or {@link Long#MAX_VALUE} when the process has no more.
     */
    long next(long previous, SplittableRandom random);

    /** Poisson arrivals: exponential gaps with mean 1/{@code rate}. */
    static ArrivalProcess poisson(double rate) {
        requireRate(rate);
        double meanGap = 1e9 / rate;
        return (previous, random) -> previous + 1 + (long) (-Math.log(1 - random.nextDouble()) * meanGap);
    }

    /** Renewal arrivals with Gamma-distributed gaps of mean 1/{@code rate} and squared coefficient of variation {@code cv2}. */
    static ArrivalProcess gamma(double rate, double cv2) {
        requireRate(rate);
        if (!(cv2 > 0)) {
            throw new IllegalArgumentException("cv2 must be > 0, got " + cv2);
        }
        double shape = 1 / cv2;
        double scale = 1e9 / (rate * shape);
        return (previous, random) -> previous + 1 + (long) (GammaSampler.next(shape, random) * scale);
    }

    /** Exactly evenly spaced arrivals, the first at 1/{@code rate}; times are computed from the count, so they do not drift. */
    static ArrivalProcess uniform(double rate) {
        requireRate(rate);
        return new ArrivalProcess() {
            private long n;

            @Override
            public long next(long previous, SplittableRandom random) {
                return Math.max(previous + 1, Math.round(++n * 1e9 / rate));
            }
        };
    }

    /**
     * On/off bursts: Poisson arrivals during {@code onNanos}, none during the following
     * {@code offNanos}, repeating; the rate while on is set so that the mean is {@code rate}.
     */
    static ArrivalProcess onOff(double rate, long onNanos, long offNanos) {
        requireRate(rate);
        double onRate = rate * (onNanos + offNanos) / onNanos;
        return new PiecewisePoisson(new double[] {onRate, 0}, new long[] {onNanos, offNanos});
    }

    private static void requireRate(double rate) {
        if (!(rate > 0) || Double.isInfinite(rate)) {
            throw new IllegalArgumentException("rate must be > 0, got " + rate);
        }
    }
}
