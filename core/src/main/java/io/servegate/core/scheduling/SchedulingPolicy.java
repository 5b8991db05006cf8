package io.servegate.core.scheduling;

/**
 * How a {@link ModelScheduler} decides which queries go to which replica, and when. The
 * scheduler owns the state (the model's queue, its replicas' lanes and profiles) and calls the
 * policy after every event; the policy sends batches, rejects queries and asks for wake-ups
 * through the scheduler. Chosen per model with {@link PolicyKind}.
 */
public sealed interface SchedulingPolicy permits ClipperPolicy, ClockworkPolicy, SymphonyPolicy {

    /** Acts on the scheduler's current state at {@code now}. */
    <P> void schedule(ModelScheduler<P> scheduler, long now);

    /**
     * Batches a lane may hold at once: 1 sends the next batch only when the previous returned
     * (Clipper); 2 lets the next one be queued at the container ahead of time, by the transport
     * overhead, so the container never idles for a round trip (Clockwork, Symphony).
     */
    int laneDepth();

    /** A batch returned; {@code serviceNanos} is the container's time, or the round trip when it reports none. */
    default void completed(Lane lane, int size, long serviceNanos) {
    }

    /** A replica joined; {@code lane} is each of its lanes in turn. */
    default void added(Lane lane) {
    }
}
