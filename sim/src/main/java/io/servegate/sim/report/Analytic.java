package io.servegate.sim.report;

/**
 * The analytic figures the simulator is checked against (Symphony §4.2, §5.2.2; issue 12), for
 * ℓ(b) = β + α·b in milliseconds.
 */
public final class Analytic {

    private Analytic() {
    }

    /** No coordination (Nexus): the largest b with 2·ℓ(b) ≤ SLO, i.e. ⌊(SLO/2 − β)/α⌋. */
    public static int uncoordinatedBatch(double sloMs, double betaMs, double alphaMs) {
        return (int) Math.floor((sloMs / 2 - betaMs) / alphaMs);
    }

    /** Staggered execution on n replicas: the largest b with (1 + 1/n)·ℓ(b) ≤ SLO. */
    public static int staggeredBatch(double sloMs, double betaMs, double alphaMs, int n) {
        return (int) Math.floor((sloMs / (1 + 1.0 / n) - betaMs) / alphaMs);
    }

    /** The throughput of n replicas running batches of b back to back: n·b/ℓ(b), per second. */
    public static double throughput(int b, double betaMs, double alphaMs, int n) {
        return n * b / ((betaMs + alphaMs * b) / 1e3);
    }

    /**
     * One replica serving the freshest queries at rate λ: the largest b (up to {@code maxBatch})
     * with λ·(SLO − ℓ(b)) ≥ b — a batch gathers what arrives in the time its answer leaves — at
     * b/ℓ(b) per second, but never more than λ.
     */
    public static double oneReplicaGoodput(double lambda, double sloMs, double betaMs, double alphaMs,
            int maxBatch) {
        int b = 0;
        while (b < maxBatch && lambda * (sloMs - betaMs - alphaMs * (b + 1)) / 1e3 >= b + 1) {
            b++;
        }
        return b == 0 ? lambda : Math.min(lambda, b / ((betaMs + alphaMs * b) / 1e3));
    }
}
