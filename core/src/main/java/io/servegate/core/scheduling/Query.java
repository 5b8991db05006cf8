package io.servegate.core.scheduling;

/**
 * One query waiting for a prediction, as its model's scheduler sees it: when it arrived, when
 * it must be answered, and what the caller attached to it.
 *
 * <p>Created by {@link Scheduler#submit}; the scheduler hands it back in exactly one
 * {@link Batch} that completes, or in exactly one {@link SchedulerActions#reject}, or in the
 * list {@link Scheduler#batchFailed} returns.
 *
 * @param <P> what the caller keeps with the query (its input and the future its client waits on)
 */
public final class Query<P> {

    private final P payload;
    private final long arrival;
    private final long deadline;
    private final Tenant tenant;
    /** Arrival order among queries of equal deadline; set when queued. */
    long seq;
    /** Batches this query was sent in. */
    int attempts;
    // Links of the queue's arrival-order list (see DeadlineQueue).
    Query<P> older;
    Query<P> newer;

    Query(P payload, long arrival, long deadline, Tenant tenant) {
        this.payload = payload;
        this.arrival = arrival;
        this.deadline = deadline;
        this.tenant = tenant;
    }

    /** What the caller attached. */
    public P payload() {
        return payload;
    }

    /** When the query arrived, on the scheduler's clock (nanoseconds). */
    public long arrival() {
        return arrival;
    }

    /** When the query must be answered, on the scheduler's clock (nanoseconds). */
    public long deadline() {
        return deadline;
    }

    /** The app it is for: its tier and weight. */
    public Tenant tenant() {
        return tenant;
    }

    /** How many batches this query has been sent in (more than one after a retried failure). */
    public int attempts() {
        return attempts;
    }
}
