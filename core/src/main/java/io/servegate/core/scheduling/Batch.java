package io.servegate.core.scheduling;

import java.util.List;

/**
 * Queries sent together to one replica, with what the scheduler predicted when it sent them.
 * Recognised by identity when it completes or fails.
 *
 * @param <P> the queries' payload type
 */
public final class Batch<P> {

    private final Lane lane;
    private final String model;
    private final List<Query<P>> queries;
    private final long sentAt;
    private final long predictedStart;
    private final long predictedFinish;
    private final boolean sentToIdle;

    Batch(Lane lane, String model, List<Query<P>> queries, long sentAt, long predictedStart, long predictedFinish,
            boolean sentToIdle) {
        this.lane = lane;
        this.model = model;
        this.queries = List.copyOf(queries);
        this.sentAt = sentAt;
        this.predictedStart = predictedStart;
        this.predictedFinish = predictedFinish;
        this.sentToIdle = sentToIdle;
    }

    /** The replica it goes to. */
    public String replica() {
        return lane.replica.id;
    }

    /** The model version it runs, as the scheduler was told it (its one model, for a {@link ModelScheduler}). */
    public String model() {
        return model;
    }

    /** The queries, earliest deadline first. */
    public List<Query<P>> queries() {
        return queries;
    }

    /** Number of queries. */
    public int size() {
        return queries.size();
    }

    /** When it was sent, on the scheduler's clock. */
    public long sentAt() {
        return sentAt;
    }

    /** When the scheduler expected the container to start it ({@code sentAt} when no profile was known). */
    public long predictedStart() {
        return predictedStart;
    }

    /**
     * When the scheduler expected the container to finish it; its answer is expected half the
     * transport overhead later ({@code sentAt} when no profile was known).
     */
    public long predictedFinish() {
        return predictedFinish;
    }

    Lane lane() {
        return lane;
    }

    /** Whether nothing else was outstanding on its lane: then its round trip minus service time is pure overhead. */
    boolean sentToIdle() {
        return sentToIdle;
    }
}
