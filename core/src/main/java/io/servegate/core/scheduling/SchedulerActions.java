package io.servegate.core.scheduling;

/**
 * What a {@link Scheduler} asks its driver to do: the gateway carries these out over gRPC and
 * Reactor timers, the simulator in virtual time. Called synchronously from inside the scheduler's
 * event methods, so an implementation should only record or hand off the action. Only a
 * {@link MultiModelScheduler} loads and unloads models; a driver of single-model replicas need not
 * implement those two.
 *
 * @param <P> the queries' payload type
 */
public interface SchedulerActions<P> {

    /** Send {@code batch} to replica {@link Batch#replica()} now, as one call. */
    void send(Batch<P> batch);

    /** Answer {@code query} now with its default output, for {@code reason}. */
    void reject(Query<P> query, RejectReason reason);

    /**
     * Call {@link Scheduler#timer} at (or soon after) {@code nanos}. Each request must be
     * honoured even when an earlier one is still pending (the scheduler asks again only when its
     * next wake-up changes); a driver that keeps one timer replaces it. A timer that fires for a
     * superseded request is harmless.
     */
    void wakeAt(long nanos);

    /**
     * Load {@link Load#model()} onto replica {@link Load#replica()}, in order with the batches sent
     * to it (the batch sent next runs after it); report the outcome with
     * {@link Scheduler#loadCompleted} or {@link Scheduler#loadFailed}.
     */
    default void load(Load load) {
        throw new UnsupportedOperationException("this driver serves single-model replicas: cannot " + load);
    }

    /**
     * Unload {@code model} from {@code replica}, in order with what was sent to it before (a batch
     * of the model already sent still runs first). It takes no replica time and has no reply: the
     * scheduler has already freed the model's memory in its accounting.
     */
    default void unload(String replica, String model) {
        throw new UnsupportedOperationException("this driver serves single-model replicas: cannot unload "
                + model + " from " + replica);
    }
}
