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

    ServedModel(String id, long sizeBytes, long loadNanos, ReplicaProfile profile) {
        this.id = id;
        this.sizeBytes = sizeBytes;
        this.loadNanos = loadNanos;
        this.profile = profile;
    }

    /** Predicted service time of a batch of {@code size}; 0 while nothing has been measured. */
    long serviceNanos(int size) {
        return profile.known() ? profile.serviceNanos(size) : 0;
    }
}
