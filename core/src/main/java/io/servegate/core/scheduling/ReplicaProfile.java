package io.servegate.core.scheduling;

import io.servegate.core.batching.BatchLatencyProfile;
import java.util.Arrays;

/**
 * What a batch of each size costs on one replica (Clockwork's per-worker action profile): the
 * container's own service time per batch size, and separately the transport overhead (round
 * trip minus service time: serialisation, the network, the gateway's own queues). Keeping the two
 * apart is what stops a busy gateway, whose round trips grow, from shrinking batches to one.
 *
 * <p>Estimates are recomputed when a sample arrives, not per decision: the schedulers ask for
 * them many times per batch. Once known, a profile is never forgotten for lack of fresh samples
 * (an idle model keeps its last estimates); fresher samples replace older ones.
 */
final class ReplicaProfile {

    private static final int OVERHEAD_WINDOW = 32;

    private final BatchLatencyProfile service;
    private final int maxBatch;
    private long[] estimates; // index = batch size, 1..maxBatch; null until the first sample
    private final long[] overheads = new long[OVERHEAD_WINDOW];
    private int overheadCount;
    private long overhead;

    ReplicaProfile(int window, long maxAgeNanos, int maxBatch) {
        this.service = new BatchLatencyProfile(window, maxAgeNanos);
        this.maxBatch = maxBatch;
    }

    /**
     * @param overheadNanos round trip minus service time, or a negative value when the round
     *                      trip also included waiting behind another batch
     */
    void record(int batchSize, long serviceNanos, long overheadNanos, long now) {
        service.record(batchSize, serviceNanos, now);
        long[] fresh = service.estimates(maxBatch, now);
        if (fresh != null) {
            estimates = fresh;
        }
        if (overheadNanos >= 0) {
            overheads[overheadCount++ % OVERHEAD_WINDOW] = overheadNanos;
            long[] sorted = Arrays.copyOf(overheads, Math.min(overheadCount, OVERHEAD_WINDOW));
            Arrays.sort(sorted);
            overhead = sorted[sorted.length / 2];
        }
    }

    boolean known() {
        return estimates != null;
    }

    /** Estimated service time of a batch of {@code size} (clamped to [1, maxBatch]); the profile must be known. */
    long serviceNanos(int size) {
        return estimates[Math.max(1, Math.min(size, maxBatch))];
    }

    /** Median transport overhead of recent batches that found their replica idle; 0 before any. */
    long overheadNanos() {
        return overhead;
    }

    /** Largest size in [1, cap] whose estimate is at most {@code budget}; 0 if none (estimates never decrease). */
    int largestWithin(long budget, int cap) {
        int lo = 0;
        int hi = Math.min(cap, maxBatch);
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (estimates[mid] <= budget) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    /** The largest size the profile covers. */
    int maxBatch() {
        return maxBatch;
    }
}
