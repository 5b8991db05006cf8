package io.servegate.core.autoscaling;

/**
 * SERF's queueing estimate (TNSM'18, §IV-C, eqs. 1–12): Poisson arrivals at {@code c} servers
 * with deterministic service whose rate depends on how many requests run at once. The
 * interference-aware M/M/c chain gives the state probabilities; Cosmetatos' correction turns
 * its waiting time into M/D/c's; the mean service time is read off the states by PASTA.
 */
public final class MdcQueue {

    private MdcQueue() {
    }

    /**
     * Mean latency (waiting plus service), in the unit of {@code 1 / mu[i]}, or +∞ when the
     * queue is unstable.
     *
     * @param lambda arrival rate
     * @param mu     {@code mu[i - 1]}: the service rate of one request while {@code i} run at once,
     *               {@code i = 1..c} (c = mu.length; without interference every entry is the same)
     */
    public static double meanLatency(double lambda, double[] mu) {
        int c = mu.length;
        if (c == 0 || lambda <= 0) {
            return c == 0 ? Double.POSITIVE_INFINITY : 1 / mu[0];
        }
        // p_n / p_0 for n < c, and the product of rho_i over all c: eq. (1), with the
        // per-state rate of SERF's chain, i * mu_i when i requests run
        double rho = lambda / (c * mu[c - 1]);
        if (rho >= 1) {
            return Double.POSITIVE_INFINITY;
        }
        double[] ratio = new double[c + 1];
        ratio[0] = 1;
        for (int n = 1; n <= c; n++) {
            ratio[n] = ratio[n - 1] * lambda / (n * mu[n - 1]);
        }
        double h = 0;
        for (int n = 0; n < c; n++) {
            h += ratio[n];
        }
        h += ratio[c] / (1 - rho);
        double p0 = 1 / h;
        double lq = p0 * ratio[c] * rho / ((1 - rho) * (1 - rho)); // eq. (5)
        double waitMmc = lq / lambda; // eq. (6), Little's law
        double f = (c - 1) * (Math.sqrt(4 + 5.0 * c) - 2) / (16.0 * c); // eq. (8)
        double g = (1 - rho) / rho; // eq. (9)
        double wait = 0.5 * (1 + f * g) * waitMmc; // eq. (7)/(10)
        double service = 0; // eq. (11): an arrival that finds n others runs at the rate of n + 1
        for (int n = 0; n < c; n++) {
            service += p0 * ratio[n] / mu[n];
        }
        service += p0 * ratio[c] / ((1 - rho) * mu[c - 1]);
        return wait + service;
    }

    /** {@link #meanLatency} for {@code c} servers of deterministic service time {@code d} each, no interference. */
    public static double meanLatency(double lambda, int c, double d) {
        double[] mu = new double[c];
        java.util.Arrays.fill(mu, 1 / d);
        return meanLatency(lambda, mu);
    }
}
