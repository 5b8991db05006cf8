package io.servegate.loadgen.load;

import org.HdrHistogram.Histogram;

/** Latency percentiles of a run, in milliseconds. */
public record LatencySummary(long count, double meanMs, double p50Ms, double p90Ms, double p99Ms, double p999Ms,
        double maxMs) {

    private static final double NANOS_PER_MS = 1_000_000.0;

    /** Summarises a histogram of nanosecond values; null when it is empty (JSON has no NaN). */
    public static LatencySummary of(Histogram h) {
        if (h.getTotalCount() == 0) {
            return null;
        }
        return new LatencySummary(h.getTotalCount(), h.getMean() / NANOS_PER_MS,
                h.getValueAtPercentile(50) / NANOS_PER_MS, h.getValueAtPercentile(90) / NANOS_PER_MS,
                h.getValueAtPercentile(99) / NANOS_PER_MS, h.getValueAtPercentile(99.9) / NANOS_PER_MS,
                h.getMaxValue() / NANOS_PER_MS);
    }
}
