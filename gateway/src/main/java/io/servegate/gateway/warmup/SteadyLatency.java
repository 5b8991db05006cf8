package io.servegate.gateway.warmup;

import java.util.ArrayDeque;

/**
 * Decides when a warm-up's latency has settled: after at least {@code minRounds} rounds, the last
 * {@code window} rounds' latencies lie within {@code tolerance} (a fraction) of their smallest.
 * The JIT compiles the path in steps, so one fast round after slow ones does not yet count.
 */
final class SteadyLatency {

    private final int minRounds;
    private final int window;
    private final double tolerance;
    private final ArrayDeque<Long> last = new ArrayDeque<>();
    private int rounds;

    SteadyLatency(int minRounds, int window, double tolerance) {
        if (window < 2 || minRounds < window || tolerance <= 0) {
            throw new IllegalArgumentException("need window >= 2, min-rounds >= window, tolerance > 0");
        }
        this.minRounds = minRounds;
        this.window = window;
        this.tolerance = tolerance;
    }

    /** Records one round's latency (nanoseconds) and says whether the latency is now steady. */
    boolean add(long roundNanos) {
        rounds++;
        last.addLast(roundNanos);
        if (last.size() > window) {
            last.removeFirst();
        }
        if (rounds < minRounds) {
            return false;
        }
        long min = last.stream().mapToLong(Long::longValue).min().orElseThrow();
        long max = last.stream().mapToLong(Long::longValue).max().orElseThrow();
        return max <= min * (1 + tolerance);
    }

    /** How far apart, as a fraction of the fastest, steady rounds may be. */
    double tolerance() {
        return tolerance;
    }

    int rounds() {
        return rounds;
    }
}
