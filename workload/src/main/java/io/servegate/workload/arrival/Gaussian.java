package io.servegate.workload.arrival;

import java.util.SplittableRandom;

/** Standard normal draws (Box–Muller), from a caller's random stream so that runs stay reproducible. */
public final class Gaussian {

    private Gaussian() {
    }

    /** A standard normal draw from {@code random}. */
    public static double next(SplittableRandom random) {
        double u1 = 1 - random.nextDouble();
        double u2 = random.nextDouble();
        return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    }
}
