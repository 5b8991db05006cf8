package io.servegate.gateway.dispatch;

import io.servegate.core.scheduling.Batch;

/**
 * What a {@link SchedulerDriver} reports of its scheduler's work, after releasing its lock: to the
 * meters of what it serves, and to the recording of a run. Every method does nothing by default.
 */
interface DispatchListener extends AutoCloseable {

    /** A query arrived at {@code now}, due at {@code deadline}. */
    default void arrived(long now, long deadline) {
    }

    /** A replica joined the scheduler. */
    default void replicaAdded(String replica, long now) {
    }

    /** A replica left the scheduler. */
    default void replicaRemoved(String replica, long now) {
    }

    /** The scheduler sent {@code batch}. */
    default void sent(Batch<PendingPrediction> batch) {
    }

    /** {@code batch} returned at {@code now}; {@code serviceNanos} is the container's time, or {@code <= 0}. */
    default void completed(Batch<PendingPrediction> batch, long serviceNanos, long now) {
    }

    /** A replica loaded a model in {@code tookNanos}. */
    default void loaded(long tookNanos) {
    }

    /** The driver closes: meters are removed. */
    @Override
    default void close() {
    }
}
