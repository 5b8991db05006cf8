package io.servegate.core.scheduling;

import java.util.Collection;
import java.util.List;

/**
 * Schedules queries onto replicas: owns their queues and binds queries to a replica only when it
 * sends their batch (late binding, as in Clockwork and Symphony). {@link ModelScheduler} serves
 * one model version on single-model replicas; {@link MultiModelScheduler} many model versions on
 * replicas that load and evict them.
 *
 * <p><b>Events in</b>: a query arrives, a replica leaves or changes availability, a batch (or a
 * load) completes or fails, a batch measured outside live traffic, a timer fires. How replicas and
 * models join is each scheduler's own (a replica's concurrency, a memory budget, a model's
 * footprint). <b>Actions out</b>, through the {@link SchedulerActions} it was made with: send this
 * batch (or load this model) to replica R, answer query Q now with the default, wake me at T.
 *
 * <p>Time is passed in with every event (nanoseconds on one monotonic clock, or a simulator's
 * virtual clock); a scheduler reads no clock, starts no thread and does no I/O. <b>Not
 * thread-safe</b>: a driver serialises its events, and carries the actions out (the gateway
 * holds a lock and carries them out after releasing it).
 *
 * <p>Guarantees, whatever the implementation: every submitted query leaves exactly once, in one
 * batch that completes, one rejection, or the list {@link #batchFailed} returns; nothing waits
 * past its deadline, since a wake-up is always requested for the earliest one.
 *
 * @param <P> what the caller keeps with each query
 */
public interface Scheduler<P> {

    /**
     * A query for {@code model} arrives. It may be rejected at once (through
     * {@link SchedulerActions#reject}): no replica can serve it, its queue is full, or it cannot
     * be answered in time.
     *
     * @return the query, which the caller will see again in a batch or a rejection
     * @throws IllegalArgumentException for a model the scheduler does not serve
     */
    default Query<P> submit(String model, P payload, long deadline, long now) {
        return submit(model, payload, deadline, Tenant.DEFAULT, now);
    }

    /**
     * A query for {@code model} arrives for {@code tenant}'s app. As {@link #submit(String,
     * Object, long, long)}; when the model cannot serve everything, higher tiers are served first
     * and the apps of a tier share the model time by weight, and a query of a lower tier that
     * cannot be served in time is rejected at once ({@link RejectReason#SHED}).
     */
    Query<P> submit(String model, P payload, long deadline, Tenant tenant, long now);

    /**
     * A replica leaves. Its outstanding batches and loads are the driver's to fail (their
     * completions are then ignored); queries no remaining replica can serve are rejected.
     */
    void removeReplica(String id, long now);

    /** Whether a replica takes batches (ready, circuit not open). An unknown replica is ignored. */
    void setAvailable(String id, boolean available, long now);

    /**
     * A batch returned. A stale or duplicate completion is ignored.
     *
     * @param serviceNanos the container's own time for it ({@code servegate_service_time_ns}),
     *                     or {@code <= 0} when it reports none (the round trip is used instead)
     */
    void batchCompleted(Batch<P> batch, long serviceNanos, long now);

    /**
     * A batch failed, or part of it (a batch may go out as several calls). Each query of
     * {@code retry} (those hit by a transport failure or a refused call) that has attempts left
     * and time before its deadline goes back into the queue, for any replica that can serve it;
     * the others of {@code retry} are returned for the caller to fail with the batch's error. The
     * batch's queries not in {@code retry} are the caller's: answered or failed already.
     */
    List<Query<P>> batchFailed(Batch<P> batch, Collection<Query<P>> retry, long now);

    /**
     * A batch of {@code model} measured on {@code replica} outside live traffic (a profiling pass
     * or a warm-up call): seeds the estimates before queries depend on them. An unknown replica
     * is ignored.
     *
     * @throws IllegalArgumentException for a model the scheduler does not serve
     */
    void profileSample(String replica, String model, int batchSize, long serviceNanos, long roundTripNanos,
            long now);

    /**
     * Replica {@code replica} holds {@code model} already (it was loaded before the replica
     * registered, or is found loaded after it recovered): no load is needed before its batches.
     * A scheduler whose replicas serve one model, held from the start, ignores it.
     *
     * @throws IllegalArgumentException for an unknown replica or model, or a model that does not
     *                                  fit what the replica has left
     */
    default void preloaded(String replica, String model, long now) {
        // single-model replicas hold their model from the start
    }

    /** A wake-up requested through {@link SchedulerActions#wakeAt} is due (or any time: harmless). */
    void timer(long now);

    /**
     * A load sent through {@link SchedulerActions#load} finished.
     *
     * @param measuredNanos how long the replica took, or {@code <= 0} when it reports nothing
     *                      (the time since it was sent is counted instead)
     */
    default void loadCompleted(Load load, long measuredNanos, long now) {
        // a scheduler that sends no loads gets none back
    }

    /** A load sent through {@link SchedulerActions#load} failed: the replica does not hold the model. */
    default void loadFailed(Load load, long now) {
        // a scheduler that sends no loads gets none back
    }

    // ---- metrics (plain reads: a gauge may see a value one event old) ----

    /** Queries waiting, every model's together. */
    int queued();

    /** Queries submitted so far. */
    long arrived();

    /** Queries sent in batches so far (a retried query counts once per batch). */
    long sentQueries();

    /** Batches sent so far. */
    long sentBatches();

    /** Queries rejected for {@code reason} so far. */
    long rejected(RejectReason reason);

    /** Container time a replica spent on completed batches (and loads), in nanoseconds; 0 if unknown. */
    long busyNanos(String replica);
}
