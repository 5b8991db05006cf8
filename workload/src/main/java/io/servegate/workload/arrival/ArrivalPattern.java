package io.servegate.workload.arrival;

/**
 * How a run makes its arrivals for a mean rate: Poisson, Gamma with a given squared coefficient of
 * variation, or a rate trace scaled to that mean. The load generator sweeps one pattern over many
 * rates; the simulator plays the same processes on its virtual clock.
 */
public interface ArrivalPattern {

    /** The arrival process of mean rate {@code ratePerSecond} (queries/s). */
    ArrivalProcess at(double ratePerSecond);

    /** A short description for reports, e.g. {@code gamma(CV²=4)}. */
    String describe();

    /** Independent exponential gaps: a Poisson process. */
    static ArrivalPattern poisson() {
        return new ArrivalPattern() {
            @Override
            public ArrivalProcess at(double ratePerSecond) {
                return ArrivalProcess.poisson(ratePerSecond);
            }

            @Override
            public String describe() {
                return "poisson";
            }
        };
    }

    /** Independent Gamma-distributed gaps of squared coefficient of variation {@code cv2} (1 is Poisson). */
    static ArrivalPattern gamma(double cv2) {
        if (!(cv2 > 0) || Double.isInfinite(cv2)) {
            throw new IllegalArgumentException("CV² must be positive and finite, got " + cv2);
        }
        return new ArrivalPattern() {
            @Override
            public ArrivalProcess at(double ratePerSecond) {
                return ArrivalProcess.gamma(ratePerSecond, cv2);
            }

            @Override
            public String describe() {
                return "gamma(CV²=" + cv2 + ")";
            }
        };
    }

    /**
     * The rates of {@code trace}, replayed as a piecewise-constant Poisson process; {@code asIs}
     * keeps the trace's rates, otherwise they are scaled so that their mean is the requested rate.
     */
    static ArrivalPattern trace(RateTrace trace, boolean asIs) {
        return new ArrivalPattern() {
            @Override
            public ArrivalProcess at(double ratePerSecond) {
                return (asIs ? trace : trace.scaledToMean(ratePerSecond)).arrivals();
            }

            @Override
            public String describe() {
                return "trace(" + trace.source() + (asIs ? ", as is" : ", scaled to the requested mean rate") + ")";
            }
        };
    }
}
