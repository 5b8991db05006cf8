package io.servegate.core.scheduling;

/**
 * How large a batch may be while apps of different tiers share an overloaded model version.
 *
 * <p>A higher tier's query that arrives while a batch runs waits for it, then rides the next. The
 * policies plan the transport on its low quantile ({@link ReplicaProfile#overheadNanos}), so where
 * round trips spread (a shared machine) one batch in ten comes back far later than planned, and
 * a critical query behind a large batch, filled up with lower-tier queries, misses its deadline.
 * So while two tiers or more arrive at over {@value TierAdmission#OVER_CAPACITY} of what the
 * version serves at most (batches that answer within the SLO, on their typical cost), no
 * batch is larger than the largest that answers within half the SLO with the round trip at its
 * 90th percentile, unless that is too small to carry the higher tiers' arrivals: then batches are
 * the smallest that carry them with {@value #HEADROOM_PERCENT} % to spare, and the lowest tier
 * gets what those batches leave. The higher tiers' own queued queries may all go in one batch.
 * Where round trips are steady (their 90th percentile leaves the same batch within half the SLO as
 * their 10th), with one tier, or below that load, it is the configured cap.
 *
 * <p>{@link TierAdmission} prices a query at the batch it may ride under this cap, whatever the
 * policy. The batches themselves are held to it by the policies that fill them from the queue
 * ({@code symphony}, {@code adaptive}), not by {@code clockwork}, which sizes each batch on its
 * earliest query's deadline already: capped, it served the critical app no better and the
 * sheddable app less (TierSchedulingTest).
 */
final class TierBatchCap {

    /** Capacity kept spare beyond the higher tiers' arrivals, as a percentage of them. */
    static final int HEADROOM_PERCENT = 10;

    /**
     * A tier that sent nothing for this long has gone, whatever its decaying rate still reads;
     * while fewer than two tiers sent anything within it, the rates are not computed at all.
     */
    private static final long SHARED_WINDOW_NANOS = 5_000_000_000L;

    private final TierAdmission tiers;

    TierBatchCap(TierAdmission tiers) {
        this.tiers = tiers;
    }

    /** The largest batch that may be sent now, planning with {@code profile}. */
    int cap(ModelScheduler<?> s, ReplicaProfile profile, long now) {
        return tierCap(s, profile, s.config().batchCap(), now);
    }

    private int tierCap(ModelScheduler<?> s, ReplicaProfile profile, int configured, long now) {
        if (!tiers.tiersArrivedWithin(SHARED_WINDOW_NANOS, now)) {
            return configured;
        }
        int lanes = s.availableLanes();
        if (lanes == 0 || !profile.overheadKnown()) {
            return configured;
        }
        Priority lowest = null;
        int arriving = 0;
        double total = 0;
        for (Priority p : Priority.values()) {
            double rate = tiers.rate(p, now);
            total += rate;
            if (rate >= TierAdmission.MIN_RATE) {
                arriving++;
                lowest = p;
            }
        }
        if (arriving < 2) {
            return configured;
        }
        // over capacity: more than the largest batch that answers within the SLO serves, on the
        // batches' typical cost. A lane is sent its next batch ahead, so the transport overlaps the
        // service and costs no capacity; pricing it in, or planning on half the SLO as admission
        // does, would take 0.7x for overload on a machine whose round trips spread, and cap it
        long slo = s.config().sloNanos();
        double spread = profile.spreadFactor();
        int largest = TierAdmission.largestWithinSlo(s, profile);
        if (total < TierAdmission.OVER_CAPACITY * throughput(profile, largest, spread, lanes)) {
            return configured;
        }
        int within = Math.max(1, profile.largestWithin(slo / 2 - profile.overheadNanos(), configured));
        double higher = 0;
        int higherQueued = 0;
        for (Priority p : Priority.values()) {
            if (p.ordinal() < lowest.ordinal()) {
                higher += tiers.rate(p, now);
                higherQueued += s.queue.queued(p);
            }
        }
        int cap = Math.max(1, profile.largestWithin(slo / 2 - profile.overheadHighNanos(), configured));
        if (cap >= within) {
            return configured; // round trips steady: the plan holds, and large batches serve more
        }
        double needed = higher * (100 + HEADROOM_PERCENT) / 100;
        while (cap < configured && throughput(profile, cap, spread, lanes) < needed) {
            cap++;
        }
        return Math.min(configured, Math.max(cap, higherQueued));
    }

    /** Queries per second that {@code lanes} lanes serve with batches of {@code b} at their typical cost. */
    private static double throughput(ReplicaProfile profile, int b, double spread, int lanes) {
        return lanes * b * 1e9 / Math.max(1, profile.serviceNanos(b) / spread);
    }
}
