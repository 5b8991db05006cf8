package io.servegate.sim;

import io.servegate.core.scheduling.RejectReason;
import java.util.Arrays;
import org.HdrHistogram.Histogram;

/**
 * What happened to one model's queries (or, merged, to all of them): every query arrives once
 * and leaves once, as a prediction in time ({@code good}), a late prediction, a default answer
 * for a {@link RejectReason}, or a failure after its replica died.
 */
public final class ModelStats {

    long arrived;
    long good;
    long late;
    long failed;
    final long[] defaults = new long[RejectReason.values().length];
    long batches;
    long[] batchSizes = new long[65]; // index = size
    /** The autoscaler's record; null when the model is not autoscaled. */
    ScalingTrace scaling;
    /** Latency of answered predictions, arrival to answer, nanoseconds. */
    final Histogram latency = new Histogram(3);

    void answered(long latencyNanos, boolean inTime) {
        if (inTime) {
            good++;
        } else {
            late++;
        }
        latency.recordValue(Math.max(0, latencyNanos));
    }

    void batch(int size) {
        batches++;
        if (size >= batchSizes.length) {
            batchSizes = Arrays.copyOf(batchSizes, Math.max(size + 1, batchSizes.length * 2));
        }
        batchSizes[size]++;
    }

    /** Adds {@code other}'s counts to these. */
    void add(ModelStats other) {
        arrived += other.arrived;
        good += other.good;
        late += other.late;
        failed += other.failed;
        for (int i = 0; i < defaults.length; i++) {
            defaults[i] += other.defaults[i];
        }
        batches += other.batches;
        if (other.batchSizes.length > batchSizes.length) {
            batchSizes = Arrays.copyOf(batchSizes, other.batchSizes.length);
        }
        for (int i = 0; i < other.batchSizes.length; i++) {
            batchSizes[i] += other.batchSizes[i];
        }
        latency.add(other.latency);
    }

    /** The autoscaler's record over the run, or null when the model was not autoscaled. */
    public ScalingTrace scaling() {
        return scaling;
    }

    public long arrived() {
        return arrived;
    }

    /** Predictions answered by their deadline. */
    public long good() {
        return good;
    }

    /** Predictions answered after their deadline. */
    public long late() {
        return late;
    }

    /** Queries that failed with their replica and could not be retried. */
    public long failed() {
        return failed;
    }

    /** Default answers for {@code reason}. */
    public long defaults(RejectReason reason) {
        return defaults[reason.ordinal()];
    }

    /** Batches sent. */
    public long batches() {
        return batches;
    }

    /** Batches of each size: index = size. */
    public long[] batchSizes() {
        return batchSizes.clone();
    }

    /** Mean size of the batches sent, 0 when none was. */
    public double meanBatchSize() {
        long queries = 0;
        for (int i = 0; i < batchSizes.length; i++) {
            queries += i * batchSizes[i];
        }
        return batches == 0 ? 0 : (double) queries / batches;
    }

    /** A latency percentile of answered predictions in milliseconds, NaN when none was answered. */
    public double latencyMs(double percentile) {
        return latency.getTotalCount() == 0 ? Double.NaN : latency.getValueAtPercentile(percentile) / 1e6;
    }
}
