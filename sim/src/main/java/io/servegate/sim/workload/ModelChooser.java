package io.servegate.sim.workload;

import java.util.SplittableRandom;

/** Which model an arrival is for: drawn by popularity (e.g. Zipf), or in turn. */
public interface ModelChooser {

    /** The model index of the next arrival. */
    int next(SplittableRandom random);

    /** Index i with probability weights[i] / Σ weights. */
    static ModelChooser weighted(double[] weights) {
        if (weights.length == 1) {
            return random -> 0;
        }
        double[] cumulative = new double[weights.length];
        double sum = 0;
        for (int i = 0; i < weights.length; i++) {
            if (!(weights[i] >= 0)) {
                throw new IllegalArgumentException("weights must be >= 0");
            }
            sum += weights[i];
            cumulative[i] = sum;
        }
        double total = sum;
        return random -> {
            double u = random.nextDouble() * total;
            int lo = 0;
            int hi = cumulative.length - 1;
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (cumulative[mid] > u) {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            return lo;
        };
    }

    /** 0, 1, …, n − 1, 0, 1, …: how uncoordinated frontends spread uniform traffic over independent backends. */
    static ModelChooser roundRobin(int n) {
        return new ModelChooser() {
            private int next;

            @Override
            public int next(SplittableRandom random) {
                int i = next;
                next = (next + 1) % n;
                return i;
            }
        };
    }

    /** Zipf popularity: weight of the model ranked k (from 1) is 1/k^s. */
    static double[] zipf(int n, double s) {
        if (n < 1 || !(s >= 0)) {
            throw new IllegalArgumentException("need n >= 1 and s >= 0");
        }
        double[] w = new double[n];
        for (int k = 1; k <= n; k++) {
            w[k - 1] = 1 / Math.pow(k, s);
        }
        return w;
    }
}
