package io.servegate.sim.latency;

import java.util.Map;
import java.util.SplittableRandom;

/**
 * Service times drawn from measured samples ({@link ServiceProfile}): a measured size draws one
 * of its own samples; another size draws a sample of the nearest measured size below it (above,
 * when there is none below) shifted by the slope between the neighbours' medians, so the noise
 * keeps its measured shape while the mean follows the batch size. Beyond the largest measured
 * size the slope of the two largest continues; with a single measured size the cost is taken as
 * proportional to the size.
 */
public final class EmpiricalLatency implements LatencyModel {

    private final int[] sizes;
    private final long[][] samples;
    private final double[] means;

    public EmpiricalLatency(ServiceProfile profile) {
        Map<Integer, long[]> m = profile.samples();
        sizes = new int[m.size()];
        samples = new long[m.size()][];
        means = new double[m.size()];
        int i = 0;
        for (Map.Entry<Integer, long[]> e : m.entrySet()) {
            sizes[i] = e.getKey();
            samples[i] = e.getValue();
            means[i] = java.util.Arrays.stream(e.getValue()).average().orElseThrow();
            i++;
        }
    }

    @Override
    public long serviceNanos(int size, SplittableRandom random) {
        int i = base(size);
        long[] s = samples[i];
        long sample = s[random.nextInt(s.length)];
        return Math.max(1, Math.round(sample + shift(i, size, sample)));
    }

    @Override
    public double meanNanos(int size) {
        int i = base(size);
        return Math.max(1, means[i] + shift(i, size, means[i]));
    }

    /** The index of the measured size a batch of {@code size} is drawn from. */
    private int base(int size) {
        int i = java.util.Arrays.binarySearch(sizes, size);
        if (i >= 0) {
            return i;
        }
        int below = -i - 2;
        return Math.max(0, below);
    }

    private double shift(int i, int size, double sample) {
        if (sizes[i] == size) {
            return 0;
        }
        if (sizes.length == 1) {
            return sample * ((double) size / sizes[0] - 1);
        }
        int lo = i < sizes.length - 1 ? i : i - 1;
        double slope = Math.max(0, (means[lo + 1] - means[lo]) / (sizes[lo + 1] - sizes[lo]));
        return slope * (size - sizes[i]);
    }
}
