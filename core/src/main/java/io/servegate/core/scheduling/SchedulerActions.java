package io.servegate.core.scheduling;

/**
 * What a {@link ModelScheduler} asks its driver to do: the gateway carries these out over gRPC
 * and Reactor timers, the simulator in virtual time. Called synchronously from inside the
 * scheduler's event methods, so an implementation should only record or hand off the action.
 *
 * @param <P> the queries' payload type
 */
public interface SchedulerActions<P> {

    /** Send {@code batch} to replica {@link Batch#replica()} now, as one call. */
    void send(Batch<P> batch);

    /** Answer {@code query} now with its default output, for {@code reason}. */
    void reject(Query<P> query, RejectReason reason);

    /**
     * Call {@link ModelScheduler#timer} at (or soon after) {@code nanos}. Each request must be
     * honoured even when an earlier one is still pending (the scheduler asks again only when its
     * next wake-up changes); a driver that keeps one timer replaces it. A timer that fires for a
     * superseded request is harmless.
     */
    void wakeAt(long nanos);
}
