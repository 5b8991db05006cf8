package io.servegate.core.scheduling;

import io.servegate.core.batching.BatchingPolicy;
import java.util.ArrayList;
import java.util.List;

/** One replica of a model: its lanes (one per batch it runs at once), profile and busy time. */
final class Replica {

    private static final long SECOND = 1_000_000_000L;
    private static final int WINDOW_SECONDS = 10;

    final String id;
    final List<Lane> lanes = new ArrayList<>();
    final ReplicaProfile profile;
    final long addedAt;
    boolean available;
    /** Whether a batch has run on it yet: the first one pays the container's one-off costs and is no sample. */
    boolean warm;
    /** Clipper's per-replica AIMD or fixed size; null under the other policies. */
    BatchingPolicy batching;
    long busyNanos;
    // container time per second of completion, for the idle fraction of the last ten seconds
    private final long[] busyBySecond = new long[WINDOW_SECONDS];
    private final long[] secondOf = new long[WINDOW_SECONDS];

    Replica(String id, int concurrency, ReplicaProfile profile, long now) {
        this.id = id;
        this.profile = profile;
        this.addedAt = now;
        for (int i = 0; i < concurrency; i++) {
            lanes.add(new Lane(this, i, now));
        }
        java.util.Arrays.fill(secondOf, Long.MIN_VALUE);
    }

    void busy(long serviceNanos, long now) {
        busyNanos += serviceNanos;
        long second = Math.floorDiv(now, SECOND);
        int slot = (int) Math.floorMod(second, (long) WINDOW_SECONDS);
        if (secondOf[slot] != second) {
            secondOf[slot] = second;
            busyBySecond[slot] = 0;
        }
        busyBySecond[slot] += serviceNanos;
    }

    /** Share of the last ten seconds (or of its life, if shorter) its lanes spent idle, in [0, 1]. */
    double idleFraction(long now) {
        long second = Math.floorDiv(now, SECOND);
        long busy = 0;
        for (int i = 0; i < WINDOW_SECONDS; i++) {
            if (secondOf[i] > second - WINDOW_SECONDS && secondOf[i] <= second) {
                busy += busyBySecond[i];
            }
        }
        long span = Math.min((long) WINDOW_SECONDS * SECOND, now - addedAt);
        if (span <= 0) {
            return 1.0;
        }
        return Math.max(0.0, Math.min(1.0, 1.0 - (double) busy / ((double) span * lanes.size())));
    }
}
