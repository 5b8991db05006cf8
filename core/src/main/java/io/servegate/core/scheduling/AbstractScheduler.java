package io.servegate.core.scheduling;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What every {@link Scheduler} does the same way: the loop after each event (expired queries
 * leave, the plan acts, the next wake-up is asked for, once), the counters, and the bookkeeping
 * of a query that arrives, goes out in a batch, is rejected or may be retried.
 *
 * @param <P> what the caller keeps with each query
 */
abstract class AbstractScheduler<P> implements Scheduler<P> {

    private final SchedulerActions<P> actions;
    /** The wake-up last asked of the driver, until it is due. */
    private long armedAt = Long.MAX_VALUE;
    /** The earliest wake-up the plan asked for during the current evaluation. */
    private long planWake = Long.MAX_VALUE;

    private long arrived;
    private long sentQueries;
    private long sentBatches;
    private final long[] rejected = new long[RejectReason.values().length];

    AbstractScheduler(SchedulerActions<P> actions) {
        this.actions = Objects.requireNonNull(actions, "actions");
    }

    /** The configuration in force now. */
    abstract SchedulerConfig config();

    /** Rejects the queued queries whose deadline has come ({@link RejectReason#DEADLINE}). */
    abstract void expire(long now);

    /** Sends, rejects and asks for wake-ups ({@link #wakeAt}) on the current state. */
    abstract void schedule(long now);

    /** The earliest deadline of a queued query, {@code Long.MAX_VALUE} when none is queued. */
    abstract long earliestDeadline();

    SchedulerActions<P> actions() {
        return actions;
    }

    @Override
    public final void timer(long now) {
        if (armedAt <= now) {
            armedAt = Long.MAX_VALUE;
        }
        run(now);
    }

    /** Re-evaluates after an event: expired queries leave, the plan acts, the next wake-up is asked for. */
    final void run(long now) {
        expire(now);
        planWake = Long.MAX_VALUE;
        schedule(now);
        long next = Math.min(planWake, earliestDeadline());
        if (next != Long.MAX_VALUE && (next < armedAt || armedAt <= now)) {
            armedAt = next;
            actions.wakeAt(next);
        }
    }

    /** Asks to be scheduled again at {@code at} even if nothing happens. */
    final void wakeAt(long at) {
        planWake = Math.min(planWake, at);
    }

    /** A query arrives: counted, not yet queued. */
    final Query<P> arrive(P payload, long deadline, Tenant tenant, long now) {
        arrived++;
        return new Query<>(payload, now, deadline, Objects.requireNonNull(tenant, "tenant"));
    }

    /** Rejects the head of {@code queue} while it is due by {@code now}. */
    final void expire(DeadlineQueue<P> queue, long now) {
        Query<P> head;
        while ((head = queue.peek()) != null && head.deadline() <= now) {
            reject(queue.poll(), RejectReason.DEADLINE);
        }
    }

    final void reject(Query<P> q, RejectReason reason) {
        rejected[reason.ordinal()]++;
        actions.reject(q, reason);
    }

    /**
     * {@code count} queries of {@code queue} for a batch predicted to take {@code batchNanos}
     * (0 when unknown), each sent once more: the earliest deadlines, or with several apps queued
     * the fair shares' first, those due by {@code dueBy} before them, the highest tiers' before
     * those where {@code byTier} ({@link DeadlineQueue#take}).
     */
    static <P> List<Query<P>> take(DeadlineQueue<P> queue, int count, long batchNanos, boolean byTier, long dueBy) {
        List<Query<P>> items = queue.take(count, Math.max(1.0, (double) batchNanos / count), byTier, dueBy);
        for (Query<P> q : items) {
            q.attempts++;
        }
        return items;
    }

    /** Hands {@code batch} to the driver. */
    final void send(Batch<P> batch) {
        sentBatches++;
        sentQueries += batch.size();
        actions.send(batch);
    }

    /** Whether a query hit by a failure may be sent again: attempts and time left. */
    final boolean mayRetry(Query<P> q, long now) {
        return q.attempts < config().maxAttempts() && q.deadline() > now;
    }

    /** A returned batch's service time: the container's own, else the round trip. */
    static long serviceNanos(Batch<?> batch, long reportedNanos, long now) {
        return reportedNanos > 0 ? reportedNanos : Math.max(0, now - batch.sentAt());
    }

    /**
     * A returned batch's transport overhead, its round trip less the container's time, when that
     * is pure overhead (it was sent to an idle lane and the container reported its time); -1
     * otherwise.
     */
    static long overheadNanos(Batch<?> batch, long reportedNanos, long now) {
        return batch.sentToIdle() && reportedNanos > 0
                ? Math.max(0, Math.max(0, now - batch.sentAt()) - reportedNanos) : -1;
    }

    // ---- metrics ----

    @Override
    public final long arrived() {
        return arrived;
    }

    @Override
    public final long sentQueries() {
        return sentQueries;
    }

    @Override
    public final long sentBatches() {
        return sentBatches;
    }

    @Override
    public final long rejected(RejectReason reason) {
        return rejected[reason.ordinal()];
    }

    /** Queries rejected so far, for every reason. */
    final long rejectedTotal() {
        long n = 0;
        for (long r : rejected) {
            n += r;
        }
        return n;
    }
}
