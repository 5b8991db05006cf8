package io.servegate.core.scheduling;

import java.util.ArrayDeque;

/**
 * One batch-at-a-time execution slot of a replica: a container running {@code c} batches at once
 * has {@code c} lanes. The scheduler predicts when each lane will be free and binds a batch to a
 * lane only when it sends it.
 */
public final class Lane {

    final Replica replica;
    final int index;
    /** When the container is predicted to finish everything sent to this lane (container side). */
    long freeAt;
    final ArrayDeque<Batch<?>> outstanding = new ArrayDeque<>(2);

    Lane(Replica replica, int index, long now) {
        this.replica = replica;
        this.index = index;
        this.freeAt = now;
    }

    /** The replica's id. */
    public String replica() {
        return replica.id;
    }

    /** Batches sent to this lane that have not returned. */
    public int outstanding() {
        return outstanding.size();
    }

    /** When the lane is predicted to be free, on the scheduler's clock. */
    public long freeAt() {
        return freeAt;
    }

    @Override
    public String toString() {
        return replica.id + "#" + index;
    }
}
