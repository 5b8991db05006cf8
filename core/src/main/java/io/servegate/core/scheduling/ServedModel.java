package io.servegate.core.scheduling;

/**
 * One model version of a {@link MultiModelScheduler}: its footprint (bytes of replica memory,
 * time to load), its queue of waiting queries, and its service-time profile, pooled over the
 * replicas that run it.
 */
final class ServedModel<P> {

    final String id;
    final long sizeBytes;
    final long loadNanos;
    final DeadlineQueue<P> queue = new DeadlineQueue<>();
    final ReplicaProfile profile;
    /** When a query of it was last dropped as infeasible while every replica holding it was busy. */
    long overloadedAt = Long.MIN_VALUE;
    /** When a load of it was last sent. */
    long loadedAt = Long.MIN_VALUE;
    /** When its queries were last answered with the default because no replica held it and none could load it in time. */
    long unloadedDropAt = Long.MIN_VALUE;
    /** Such queries since {@link #unloadedSince}. */
    private int unloadedDrops;
    private long unloadedSince;
    /** The size of its recent batches, an exponentially weighted mean (weight 1/8 for the newest); 0 before any. */
    private double recentBatch;

    ServedModel(String id, long sizeBytes, long loadNanos, ReplicaProfile profile) {
        this.id = id;
        this.sizeBytes = sizeBytes;
        this.loadNanos = loadNanos;
        this.profile = profile;
    }

    /**
     * {@code n} of its queries were answered with the default at {@code now} because no replica
     * held it and none could load it in time.
     *
     * @return how many were, since the first within the last {@code windowNanos}
     */
    int droppedUnloaded(int n, long now, long windowNanos) {
        if (unloadedDrops == 0 || now - unloadedSince > windowNanos) {
            unloadedSince = now;
            unloadedDrops = 0;
        }
        unloadedDrops += n;
        unloadedDropAt = now;
        return unloadedDrops;
    }

    /** A batch of {@code size} of it was sent. */
    void sent(int size) {
        recentBatch = recentBatch == 0 ? size : recentBatch + (size - recentBatch) / 8;
    }

    /**
     * Predicted time to serve {@code n} of its queries in batches of its recent size (all in one
     * before any was sent); 0 while nothing has been measured.
     */
    long servingNanos(int n, int cap) {
        int b = Math.max(1, Math.min(cap, recentBatch == 0 ? n : (int) Math.round(recentBatch)));
        if (n <= b) {
            return serviceNanos(n);
        }
        return (long) ((n + b - 1) / b) * serviceNanos(b);
    }

    /** Predicted service time of a batch of {@code size}; 0 while nothing has been measured. */
    long serviceNanos(int size) {
        return profile.known() ? profile.serviceNanos(size) : 0;
    }
}
