package io.servegate.loadgen;

/**
 * The intended send times of an open-loop load, as gaps between consecutive arrivals, drawn from a
 * seeded generator so that a run's schedule can be replayed. Not thread-safe: one driver thread
 * draws the gaps.
 */
public interface Arrivals {

    /** The gap from the previous arrival (or from the start) to the next one, in nanoseconds, {@code ≥ 0}. */
    long nextGapNanos();

    /**
     * How an open-loop run makes its arrivals for a mean rate: Poisson, Gamma with a given squared
     * coefficient of variation, or a rate trace scaled to that mean.
     */
    interface Process {

        /** A new schedule of mean rate {@code ratePerSecond} (requests/s) from {@code seed}. */
        Arrivals start(double ratePerSecond, long seed);

        /** A short description for reports, e.g. {@code gamma(CV²=4)}. */
        String describe();
    }

    /** Independent exponential gaps: a Poisson process. */
    static Process poisson() {
        return new Process() {
            @Override
            public Arrivals start(double ratePerSecond, long seed) {
                return new PoissonArrivals(ratePerSecond, seed);
            }

            @Override
            public String describe() {
                return "poisson";
            }
        };
    }

    /** Independent Gamma-distributed gaps of squared coefficient of variation {@code cv2} (1 is Poisson). */
    static Process gamma(double cv2) {
        GammaArrivals.check(cv2);
        return new Process() {
            @Override
            public Arrivals start(double ratePerSecond, long seed) {
                return new GammaArrivals(ratePerSecond, cv2, seed);
            }

            @Override
            public String describe() {
                return "gamma(CV²=" + cv2 + ")";
            }
        };
    }

    /**
     * The per-second rates of {@code trace}, replayed as a piecewise-constant Poisson process;
     * {@code asIs} keeps the trace's rates, otherwise they are scaled so that their mean is the
     * requested rate.
     */
    static Process trace(RateTrace trace, boolean asIs) {
        return new Process() {
            @Override
            public Arrivals start(double ratePerSecond, long seed) {
                return new TraceArrivals(asIs ? trace : trace.scaledToMean(ratePerSecond), seed);
            }

            @Override
            public String describe() {
                return "trace(" + trace.source() + (asIs ? ", as is" : ", scaled to the requested mean rate") + ")";
            }
        };
    }
}
