package io.servegate.core.rollout;

import java.util.List;

/**
 * Evaluates a rollout's guards on its evidence with confidence bounds.
 *
 * <ul>
 *   <li>SLO misses and defaults attributable to the candidate: its rate minus the baseline's over
 *       the same period (a machine or a network that slows both versions is not the candidate's
 *       doing), with Newcombe's hybrid score interval for a difference of proportions (each rate's
 *       Wilson interval combined), which stays sensible for rare events and few queries; without
 *       baseline queries, the candidate's rate alone.</li>
 *   <li>Errors of the candidate's queries (its own container's failures): the Wilson score
 *       interval.</li>
 *   <li>Loss increase: the difference of the two versions' mean feedback losses with a normal
 *       approximation of the posterior of each mean under a uniform prior (mean
 *       {@code (sum + 1) / (n + 2)}, variance at most {@code m (1 - m) / n} for losses in
 *       {@code [0, 1]}, exact for 0/1 classification losses); decided only once each version has
 *       {@value #MIN_LOSS_SAMPLES} labels.</li>
 * </ul>
 * A two-sided interval at the guards' confidence {@code c} uses the normal quantile of
 * {@code (1 + c) / 2}; the decision rule that reads it is in {@link RolloutDecider}.
 */
public final class GuardCheck {

    /** Feedback labels each version needs before the normal approximation of its mean loss is used. */
    public static final long MIN_LOSS_SAMPLES = 30;

    private GuardCheck() {
    }

    /** @return the three guards' values, in the order slo_miss_increase, error_rate, loss_increase */
    public static List<GuardValue> evaluate(Guards g, RolloutEvidence e) {
        double z = normalQuantile((1 + g.confidence()) / 2);
        VersionStats c = e.candidate();
        VersionStats b = e.baseline();
        return List.of(
                rateIncrease("slo_miss_increase", c.sloMisses(), c.queries(), b.sloMisses(), b.queries(),
                        g.maxSloMissIncrease(), z),
                rate("error_rate", c.errors(), c.queries(), g.maxErrorRate(), z),
                lossIncrease(c, b, g.maxLossIncrease(), z));
    }

    private static GuardValue rate(String name, long k, long n, double limit, double z) {
        if (n == 0) {
            return GuardValue.of(name, Double.NaN, 0, 1, limit, false);
        }
        double[] w = wilson(k, n, z);
        return GuardValue.of(name, (double) k / n, w[0], w[1], limit, true);
    }

    /** The candidate's rate {@code kc / nc} minus the baseline's {@code kb / nb}, Newcombe's interval. */
    private static GuardValue rateIncrease(String name, long kc, long nc, long kb, long nb, double limit, double z) {
        if (nc == 0) {
            return GuardValue.of(name, Double.NaN, -1, 1, limit, false);
        }
        double pc = (double) kc / nc;
        double[] c = wilson(kc, nc, z);
        double pb = nb == 0 ? 0 : (double) kb / nb;
        double[] b = nb == 0 ? new double[] {0, 0} : wilson(kb, nb, z);
        double d = pc - pb;
        double lower = d - Math.sqrt((pc - c[0]) * (pc - c[0]) + (b[1] - pb) * (b[1] - pb));
        double upper = d + Math.sqrt((c[1] - pc) * (c[1] - pc) + (pb - b[0]) * (pb - b[0]));
        return GuardValue.of(name, d, lower, upper, limit, true);
    }

    /** The Wilson score interval of {@code k} of {@code n}, {@code n > 0}: {lower, upper}. */
    static double[] wilson(long k, long n, double z) {
        double p = (double) k / n;
        double z2 = z * z;
        double centre = (p + z2 / (2 * n)) / (1 + z2 / n);
        double half = z / (1 + z2 / n) * Math.sqrt(p * (1 - p) / n + z2 / (4.0 * n * n));
        return new double[] {Math.max(0, centre - half), Math.min(1, centre + half)};
    }

    private static GuardValue lossIncrease(VersionStats c, VersionStats b, double limit, double z) {
        double observed = c.meanLoss() - b.meanLoss();
        if (c.feedback() < MIN_LOSS_SAMPLES || b.feedback() < MIN_LOSS_SAMPLES) {
            return GuardValue.of("loss_increase", observed, -1, 1, limit, false);
        }
        double mc = (c.lossSum() + 1) / (c.feedback() + 2);
        double mb = (b.lossSum() + 1) / (b.feedback() + 2);
        double se = Math.sqrt(mc * (1 - mc) / c.feedback() + mb * (1 - mb) / b.feedback());
        double d = mc - mb;
        return GuardValue.of("loss_increase", observed, d - z * se, d + z * se, limit, true);
    }

    /** The standard normal quantile (Acklam's rational approximation, relative error below 1.2e-9). */
    static double normalQuantile(double p) {
        if (!(p > 0 && p < 1)) {
            throw new IllegalArgumentException("p must be in (0, 1), was " + p);
        }
        double[] a = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
        double[] bb = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                6.680131188771972e+01, -1.328068155288572e+01};
        double[] cc = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
        double[] d = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                3.754408661907416e+00};
        double low = 0.02425;
        if (p < low) {
            double q = Math.sqrt(-2 * Math.log(p));
            return (((((cc[0] * q + cc[1]) * q + cc[2]) * q + cc[3]) * q + cc[4]) * q + cc[5])
                    / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
        }
        if (p > 1 - low) {
            return -normalQuantile(1 - p);
        }
        double q = p - 0.5;
        double r = q * q;
        return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
                / (((((bb[0] * r + bb[1]) * r + bb[2]) * r + bb[3]) * r + bb[4]) * r + 1);
    }
}
