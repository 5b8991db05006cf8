package io.servegate.workload.arrival;

import java.util.SplittableRandom;

/**
 * A Poisson process whose rate is constant within each of a cycle of intervals (a rate trace's
 * seconds or minutes, or on/off phases), repeating when the run outlasts the cycle. Exact, by
 * inverting the cumulative intensity Λ: the next arrival after t is Λ⁻¹(Λ(t) + E), E ~ Exp(1).
 */
final class PiecewisePoisson implements ArrivalProcess {

    private final double[] rates;  // per second
    private final long[] starts;   // interval i spans [starts[i], starts[i + 1]) within a cycle
    private final double[] before; // Λ at starts[i], in expected arrivals
    private final long cycle;
    private final double perCycle;

    PiecewisePoisson(double[] ratesPerSecond, long[] widthsNanos) {
        if (ratesPerSecond.length != widthsNanos.length || ratesPerSecond.length == 0) {
            throw new IllegalArgumentException("need one width per rate");
        }
        int n = ratesPerSecond.length;
        rates = ratesPerSecond.clone();
        starts = new long[n + 1];
        before = new double[n + 1];
        for (int i = 0; i < n; i++) {
            if (!(rates[i] >= 0) || widthsNanos[i] <= 0) {
                throw new IllegalArgumentException("rates must be >= 0 and widths > 0");
            }
            starts[i + 1] = starts[i] + widthsNanos[i];
            before[i + 1] = before[i] + rates[i] * widthsNanos[i] / 1e9;
        }
        cycle = starts[n];
        perCycle = before[n];
        if (!(perCycle > 0)) {
            throw new IllegalArgumentException("a rate must be positive somewhere");
        }
    }

    @Override
    public long next(long previous, SplittableRandom random) {
        double target = intensity(previous) - Math.log(1 - random.nextDouble());
        return Math.max(previous + 1, inverse(target));
    }

    private double intensity(long t) {
        long cycles = t / cycle;
        long within = t % cycle;
        int i = interval(within);
        return cycles * perCycle + before[i] + rates[i] * (within - starts[i]) / 1e9;
    }

    private long inverse(double lambda) {
        long cycles = (long) (lambda / perCycle);
        double rest = lambda - cycles * perCycle;
        // the interval where Λ within the cycle reaches rest (skipping those with rate 0)
        int lo = 0;
        int hi = rates.length - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (before[mid] <= rest) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        while (rates[lo] == 0) {
            lo++; // rest == before[lo] exactly at a zero-rate interval: the next positive one starts there
            if (lo == rates.length) {
                return (cycles + 1) * cycle;
            }
        }
        return cycles * cycle + starts[lo] + (long) ((rest - before[lo]) / rates[lo] * 1e9);
    }

    private int interval(long within) {
        int lo = 0;
        int hi = rates.length - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (starts[mid] <= within) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }
}
