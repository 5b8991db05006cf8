package io.servegate.sim.workload;

import io.servegate.workload.arrival.RateTrace;
import java.util.SplittableRandom;

/** The rate traces autoscaling is judged on, per second. */
public final class ScalingWorkloads {

    private ScalingWorkloads() {
    }

    /**
     * A day compressed into {@code seconds}: a raised cosine from {@code peak/10} at the ends to
     * {@code peak} at midday (a ×10 swing), with a burst every {@code seconds/12} on average, at a
     * random time, of 1.5× the rate of the moment for 20 s.
     */
    public static RateTrace day(double peak, int seconds, long seed) {
        double low = peak / 10;
        double[] counts = new double[seconds];
        for (int t = 0; t < seconds; t++) {
            counts[t] = low + (peak - low) * (1 - Math.cos(2 * Math.PI * t / seconds)) / 2;
        }
        SplittableRandom random = new SplittableRandom(seed);
        for (int b = 0; b < 12; b++) {
            int start = random.nextInt(Math.max(1, seconds - 20));
            for (int t = start; t < Math.min(seconds, start + 20); t++) {
                counts[t] *= 1.5;
            }
        }
        return new RateTrace("day: " + low + " to " + peak + "/s over " + seconds + " s, 12 bursts of 1.5x for 20 s",
                counts, 1_000_000_000L);
    }

    /** Steps: {@code rates[i]} for {@code seconds[i]}. */
    public static RateTrace steps(double[] rates, int[] seconds) {
        StringBuilder name = new StringBuilder("steps:");
        int total = 0;
        for (int s : seconds) {
            total += s;
        }
        double[] counts = new double[total];
        int t = 0;
        for (int i = 0; i < rates.length; i++) {
            name.append(' ').append(rates[i]).append("/s for ").append(seconds[i]).append(" s");
            for (int k = 0; k < seconds[i]; k++) {
                counts[t++] = rates[i];
            }
        }
        return new RateTrace(name.toString(), counts, 1_000_000_000L);
    }

    /** The busiest second. */
    public static double peak(RateTrace trace) {
        double max = 0;
        for (double c : trace.counts()) {
            max = Math.max(max, c);
        }
        return max / (trace.binNanos() / 1e9);
    }
}
