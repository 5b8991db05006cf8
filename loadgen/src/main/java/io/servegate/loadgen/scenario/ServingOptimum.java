package io.servegate.loadgen.scenario;

/**
 * Analytic goodput of a model on N replicas whose batch of b takes ℓ(b) = β + α·b (Symphony
 * §5.2.2), the yardsticks of the scheduling benchmark. Times in milliseconds, rates per second.
 */
public final class ServingOptimum {

    /** Guards floor() against a quotient that lands a rounding error below a whole number. */
    private static final double EPSILON = 1e-9;

    private ServingOptimum() {
    }

    /**
     * A batch size and the goodput it gives.
     *
     * @param batchSize b, 0 if even a batch of one misses the SLO
     * @param perSec predictions within the SLO per second, all replicas together
     */
    public record Point(int batchSize, double perSec) {
    }

    /**
     * Replicas without coordination: a query may wait for a whole batch before its own runs, so
     * 2·ℓ(b) ≤ SLO; b = floor((SLO/2 − β)/α), throughput N·b/ℓ(b).
     */
    public static Point uncoordinated(int replicas, double betaMs, double alphaMs, double sloMs) {
        return largestWithin(replicas, betaMs, alphaMs, sloMs / 2);
    }

    /**
     * Replicas whose batches are staggered (one starts every ℓ(b)/N), so a query waits at most
     * ℓ(b)/N: (1 + 1/N)·ℓ(b) ≤ SLO; b = floor((SLO/(1 + 1/N) − β)/α), throughput N·b/ℓ(b).
     */
    public static Point staggered(int replicas, double betaMs, double alphaMs, double sloMs) {
        return largestWithin(replicas, betaMs, alphaMs, sloMs / (1 + 1.0 / replicas));
    }

    /**
     * The best a scheduler that serves the freshest queries can do at offered rate λ: a batch of
     * the b freshest queries has waited b/λ, so it meets the SLO while λ·(SLO − ℓ(b)) ≥ b; the
     * largest such b (at least 1 while ℓ(1) ≤ SLO: at low rates a query need not wait for others)
     * gives goodput min(λ, N·b/ℓ(b)).
     */
    public static Point atRate(int replicas, double betaMs, double alphaMs, double sloMs, double ratePerSec) {
        check(replicas, betaMs, alphaMs, sloMs);
        if (!(ratePerSec > 0)) {
            throw new IllegalArgumentException("the rate must be positive, got " + ratePerSec);
        }
        if (betaMs + alphaMs > sloMs) {
            return new Point(0, 0);
        }
        double perMs = ratePerSec / 1000;
        // λ·(SLO − β − α·b) ≥ b  ⇔  b ≤ λ·(SLO − β) / (1 + λ·α)
        int b = Math.max(1, (int) Math.floor(perMs * (sloMs - betaMs) / (1 + perMs * alphaMs) + EPSILON));
        return new Point(b, Math.min(ratePerSec, throughput(replicas, betaMs, alphaMs, b)));
    }

    private static Point largestWithin(int replicas, double betaMs, double alphaMs, double budgetMs) {
        check(replicas, betaMs, alphaMs, budgetMs);
        int b = (int) Math.floor((budgetMs - betaMs) / alphaMs + EPSILON);
        return b < 1 ? new Point(0, 0) : new Point(b, throughput(replicas, betaMs, alphaMs, b));
    }

    private static double throughput(int replicas, double betaMs, double alphaMs, int b) {
        return replicas * b * 1000 / (betaMs + alphaMs * b);
    }

    private static void check(int replicas, double betaMs, double alphaMs, double sloMs) {
        if (replicas < 1 || !(betaMs >= 0) || !(alphaMs > 0) || !(sloMs > 0)) {
            throw new IllegalArgumentException("need replicas ≥ 1, β ≥ 0, α > 0 and SLO > 0, got " + replicas + ", "
                    + betaMs + ", " + alphaMs + ", " + sloMs);
        }
    }
}
