package io.servegate.core.scheduling;

import io.servegate.core.batching.BatchLatencyProfile;
import java.util.Arrays;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What a batch of each size costs on one replica (Clockwork's per-worker action profile): the
 * container's own service time per batch size, and separately the transport overhead (round
 * trip minus service time: serialisation, the network, the gateway's own queues). Keeping the two
 * apart is what stops a busy gateway, whose round trips grow, from shrinking batches to one.
 *
 * <p>Estimates are recomputed on the first read after new samples, as of the newest sample, and at
 * most every 10 ms of sample time, not per decision: the schedulers ask for them many times per
 * batch. A profile whose newest sample is older than the sample age limit is
 * stale: the schedulers then probe with a batch of one rather than trust it, since a replica
 * judged too slow for every query would otherwise never be measured again.
 */
final class ReplicaProfile {

    private static final int OVERHEAD_WINDOW = 32;
    /** Estimates are recomputed at most this often (of sample time): a profile spans seconds, and a busy replica completes a batch every few milliseconds. */
    private static final long RECOMPUTE_NANOS = 10_000_000L;
    /** A batch size never measured is sent at most this often: see {@link #sendable}. */
    static final long EXPLORE_INTERVAL_NANOS = 5_000_000_000L;

    private final BatchLatencyProfile service;
    private final int maxBatch;
    private final long maxAgeNanos;
    private long lastSampleAt = Long.MIN_VALUE;
    private int lastSize;
    /** How far above the median the estimates plan (1: steady), computed with them. */
    private double spread = 1;
    private long[] estimates; // index = batch size, 1..maxBatch; null until the first sample
    /** Whether samples arrived since the estimates were computed. */
    private boolean stale;
    private long computedAt;
    private final long[] overheads = new long[OVERHEAD_WINDOW];
    /** Where the overheads are sorted for their low quantile, once per batch: no array each time. */
    private final long[] sortedOverheads = new long[OVERHEAD_WINDOW];
    private int overheadCount;
    private long overhead;
    private long overheadHigh;
    private long overheadAt = Long.MIN_VALUE;
    private long exploredAt = Long.MIN_VALUE;
    /** Whether a size's first batch was seen to cost far more than the other sizes allowed. */
    private boolean coldShapes;

    ReplicaProfile(int window, long maxAgeNanos, int maxBatch) {
        this.service = new BatchLatencyProfile(window, maxAgeNanos);
        this.maxBatch = maxBatch;
        this.maxAgeNanos = maxAgeNanos;
    }

    /**
     * @param overheadNanos round trip minus service time, or a negative value when the round
     *                      trip also included waiting behind another batch
     */
    void record(int batchSize, long serviceNanos, long overheadNanos, long now) {
        if (known() && !service.measured(batchSize) && batchSize <= maxBatch) {
            // the first batch of a new size, far slower than the other sizes allow? (computed apart:
            // reading the cached estimates here would freeze them before the samples that follow).
            // Each new size judges again: a stall that happened to hit one first batch is cleared
            // by the next size explored, while a replica whose every new shape is cold stays judged cold
            long[] allowed = service.estimates(maxBatch, now);
            coldShapes = allowed != null && serviceNanos > BatchLatencyProfile.OUTLIER_FACTOR * allowed[batchSize];
        }
        service.record(batchSize, serviceNanos, now);
        if (now >= lastSampleAt) {
            lastSampleAt = now;
            lastSize = Math.min(batchSize, maxBatch);
        }
        stale = true;
        if (overheadNanos >= 0) {
            overheads[overheadCount++ % OVERHEAD_WINDOW] = overheadNanos;
            int n = Math.min(overheadCount, OVERHEAD_WINDOW);
            System.arraycopy(overheads, 0, sortedOverheads, 0, n);
            Arrays.sort(sortedOverheads, 0, n);
            overhead = sortedOverheads[n / 10];
            overheadHigh = sortedOverheads[n * 9 / 10];
            overheadAt = Math.max(overheadAt, now);
        }
    }

    boolean known() {
        return lastSampleAt != Long.MIN_VALUE;
    }

    /** Known, and measured within the sample age limit. */
    boolean fresh(long now) {
        return known() && now - lastSampleAt <= maxAgeNanos;
    }

    /**
     * The estimates, recomputed when samples arrived since the last computation, at most every
     * 10 ms of sample time. When recent samples cover a single batch size, they set the level and all the samples
     * still kept, however old, give the shape: extrapolating from one size alone would make every batch cost in
     * proportion to its size, a batch larger than the one measured would never look feasible, and
     * so it would never be measured again.
     */
    private long[] estimates() {
        if (stale && (estimates == null || lastSampleAt - computedAt >= RECOMPUTE_NANOS)) {
            computedAt = lastSampleAt;
            spread = service.spreadFactor(lastSampleAt);
            long[] fresh = service.estimates(maxBatch, lastSampleAt);
            if (service.recentSizes(lastSampleAt) == 1) {
                // the newest sample is recent, so its size is the one; older samples give the shape
                estimates = rescaled(service.estimates(maxBatch, lastSampleAt, Long.MAX_VALUE), fresh, lastSize);
            } else {
                estimates = fresh;
            }
            stale = false;
        }
        return estimates;
    }

    /** {@code shape} scaled so that it agrees with {@code level} at the size {@code measured}. */
    private static long[] rescaled(long[] shape, long[] level, int measured) {
        double factor = (double) level[measured] / Math.max(1, shape[measured]);
        long[] out = new long[shape.length];
        for (int b = 1; b < shape.length; b++) {
            out[b] = Math.round(shape[b] * factor);
        }
        return out;
    }

    /** Estimated service time of a batch of {@code size} (clamped to [1, maxBatch]); the profile must be known. */
    long serviceNanos(int size) {
        return estimates()[Math.max(1, Math.min(size, maxBatch))];
    }

    /**
     * How far above the median {@link #serviceNanos} plans (1 where batches are steady): the
     * estimates are upper quartiles for deadlines, and {@code serviceNanos(b) / spreadFactor()} is a
     * batch's typical cost, for throughput. The profile must be known.
     */
    double spreadFactor() {
        estimates();
        return spread;
    }

    /**
     * The transport overhead of batches that found their replica idle: the 10th percentile of the
     * last 32, 0 before any. A low quantile, not the median: above the transport's own cost, the
     * overhead is the gateway's queueing when it is short of CPU (GC, a burst of requests), and
     * planning with it would make every query look infeasible exactly when the gateway is busiest,
     * leaving nothing sent and no sample to correct it. A batch that comes back later than planned
     * still answers nothing late: the gateway answers with the default at the deadline.
     */
    long overheadNanos() {
        return overhead;
    }

    /**
     * The 90th percentile of the same overheads (0 before any): how late one batch in ten comes
     * back beyond what {@link #overheadNanos} plans, which is what a query waiting behind a running
     * batch risks where round trips spread.
     */
    long overheadHighNanos() {
        return overheadHigh;
    }

    /** Whether a batch that found its replica idle has been measured: {@link #overheadNanos} is 0 until then. */
    boolean overheadKnown() {
        return overheadCount > 0;
    }

    /**
     * Whether a batch that found its replica idle was measured within the sample age limit. Only
     * such batches measure the overhead, so a replica that completes batches may still have an old
     * overhead: one measured when it was slow is trusted only while it is this recent.
     */
    boolean overheadFresh(long now) {
        return overheadAt != Long.MIN_VALUE && now - overheadAt <= maxAgeNanos;
    }

    /** Largest size in [1, cap] whose estimate is at most {@code budget}; 0 if none (estimates never decrease). */
    int largestWithin(long budget, int cap) {
        long[] e = estimates();
        int lo = 0;
        int hi = Math.min(cap, maxBatch);
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (e[mid] <= budget) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    /**
     * The size to send when a policy chose {@code size}. An accelerator may pay hundreds of
     * milliseconds for the first batch of a new shape (autotuning, lazy allocation), and a policy
     * whose batch size follows the queue would try a new size every few batches. So once a first
     * batch of some size has been seen to cost far more than the other sizes allowed, a size
     * never measured is tried at most once per {@link #EXPLORE_INTERVAL_NANOS}, which bounds what
     * exploring costs, and otherwise the largest smaller size that was measured goes instead (a
     * smaller batch answers no later). Before that, and for sizes measured, {@code size} itself.
     */
    int sendable(int size, long now) {
        if (!coldShapes || service.measured(size)) {
            return size;
        }
        if (exploredAt == Long.MIN_VALUE || now - exploredAt >= EXPLORE_INTERVAL_NANOS) {
            exploredAt = now;
            return size;
        }
        for (int b = size - 1; b >= 1; b--) {
            if (service.measured(b)) {
                return b;
            }
        }
        return size;
    }

    /** Its estimates of sizes 1, 2, 4, … up to {@link #maxBatch} and its overhead; the profile must be known. */
    ReplicaEstimate estimate() {
        SortedMap<Integer, Long> service = new TreeMap<>();
        for (int b = 1; b <= maxBatch; b = b < maxBatch && b * 2 > maxBatch ? maxBatch : b * 2) {
            service.put(b, serviceNanos(b));
        }
        return new ReplicaEstimate(service, overheadNanos());
    }

    /** The largest size the profile covers. */
    int maxBatch() {
        return maxBatch;
    }
}
