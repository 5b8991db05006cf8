package io.servegate.workload.arrival;

import java.util.SplittableRandom;

/** Gamma(shape, 1) draws by Marsaglia and Tsang; shapes below 1 by the boost u^(1/shape). */
public final class GammaSampler {

    private GammaSampler() {
    }

    /** A Gamma({@code shape}, 1) draw from {@code random}. */
    public static double next(double shape, SplittableRandom random) {
        if (shape < 1) {
            return next(shape + 1, random) * Math.pow(random.nextDouble(), 1 / shape);
        }
        double d = shape - 1.0 / 3;
        double c = 1 / Math.sqrt(9 * d);
        while (true) {
            double x;
            double v;
            do {
                x = Gaussian.next(random);
                v = 1 + c * x;
            } while (v <= 0);
            v = v * v * v;
            double u = random.nextDouble();
            if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) {
                return d * v;
            }
        }
    }
}
