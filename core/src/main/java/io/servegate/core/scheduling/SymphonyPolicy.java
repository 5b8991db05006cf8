package io.servegate.core.scheduling;

import java.util.ArrayList;
import java.util.List;

/**
 * Symphony's scheduler for one model (§4.3, Appendix C): one candidate batch, sent to the lane
 * that will be free earliest.
 *
 * <ul>
 *   <li><b>Pruning.</b> The candidate is the largest {@code b} (up to the batch cap) such that at
 *       least {@code b} queued queries would still be answered in time by a batch of {@code b}
 *       started when the lane is free; the queries with earlier deadlines than those {@code b}
 *       cannot make such a batch and are rejected ({@link RejectReason#INFEASIBLE}). Under
 *       overload this serves the freshest queries in large batches instead of the stalest in
 *       small ones, so goodput holds a flat top.</li>
 *   <li><b>Deferral.</b> The candidate is sent at {@code sched_at = dl − ℓ(b + 1)} (with
 *       {@code dl} its earliest deadline, less the transport overhead), the last moment at which
 *       it could still take one more query, unless it already holds what arrives during the
 *       batch's fixed cost ({@code β·λ} queries, with β from the profile and λ the measured
 *       arrival rate) or cannot grow further. It is non-work-conserving: a lane may idle while the
 *       batch grows.</li>
 *   <li>Like Clockwork it sends a lane its next batch ahead, by the transport overhead.</li>
 * </ul>
 *
 * <p>Work-conserving below capacity ({@link PolicyKind#ADAPTIVE}): while the measured arrival
 * rate is under {@value #CONSERVING_LOAD} of what the available lanes serve at the largest batch
 * that answers within half the SLO, the candidate goes at once. Deferral buys larger batches,
 * which only matter when the replicas are short of capacity; below it, waiting until
 * {@code sched_at} spends all the deadline's slack, so that any error of the profile, a stall of
 * the replica or a late timer makes the batch late.
 */
final class SymphonyPolicy implements SchedulingPolicy {

    /** Load (arrival rate over capacity) under which the adaptive variant does not defer. */
    static final double CONSERVING_LOAD = 0.8;

    private final SchedulerConfig config;
    private final boolean conserving;

    /** @param conserving whether it sends at once below capacity ({@link PolicyKind#ADAPTIVE}) */
    SymphonyPolicy(SchedulerConfig config, boolean conserving) {
        this.config = config;
        this.conserving = conserving;
    }

    @Override
    public int laneDepth() {
        return 2;
    }

    @Override
    public <P> void schedule(ModelScheduler<P> s, long now) {
        while (!s.queue.isEmpty()) {
            Slot slot = Slot.next(s, laneDepth(), now);
            if (slot == Slot.STOP) {
                return;
            }
            if (slot == Slot.AGAIN) {
                continue;
            }
            ReplicaProfile profile = slot.profile();
            long overhead = profile.overheadNanos();
            int cap = s.batchCap(profile, now);
            int b = prune(s, profile, slot.answerBase(), cap, now);
            if (b == 0) {
                continue; // everything queued was infeasible and is gone
            }
            if (b < cap && b < fillTarget(s, profile, cap, now) && !(conserving && belowCapacity(s, profile, now))) {
                // sched_at: sending later than this, b + 1 queries could no longer make the earliest deadline
                long schedAt = s.queue.peek().deadline() - profile.serviceNanos(b + 1) - overhead
                        - config.safetyMarginNanos();
                if (now < schedAt) {
                    s.wakeAt(schedAt);
                    return;
                }
            }
            b = profile.sendable(b, now);
            s.send(slot.lane(), b, now, slot.start(), slot.start() + profile.serviceNanos(b));
        }
    }

    /**
     * Finds the candidate's size and rejects the queries ahead of it that cannot make it (see the
     * class comment). Only queries due before a full batch could answer are looked at: few, unless
     * overloaded.
     *
     * @return the size, or 0 when no queued query can be answered in time (all were rejected)
     */
    private static <P> int prune(ModelScheduler<P> s, ReplicaProfile profile, long answerBase, int cap, long now) {
        boolean tiers = s.queue.apps() > 1 && s.tiersApply(profile, now);
        int top = Math.min(cap, s.queue.size());
        List<Query<P>> early = new ArrayList<>();
        Query<P> head;
        while ((head = s.queue.peek()) != null && head.deadline() < answerBase + profile.serviceNanos(top)) {
            early.add(s.queue.poll());
        }
        int n = early.size() + s.queue.size();
        int size = 0;
        int before = early.size(); // queries due before a batch of b would answer, for the b under test
        for (int b = top; b >= 1; b--) {
            long answer = answerBase + profile.serviceNanos(b);
            while (before > 0 && early.get(before - 1).deadline() >= answer) {
                before--;
            }
            if (n - before >= b && (b == 1 || !tiers || !displaces(s, early, before, answerBase + profile.serviceNanos(1)))) {
                size = b;
                break;
            }
        }
        int drop = size == 0 ? early.size() : before;
        for (int i = 0; i < early.size(); i++) {
            if (i < drop) {
                s.reject(early.get(i), RejectReason.INFEASIBLE);
            } else {
                s.queue.add(early.get(i));
            }
        }
        return size;
    }

    /**
     * Whether dropping the first {@code drop} of {@code early} would drop a query that a smaller
     * batch could still answer (due no earlier than {@code answerOne}) while a lower tier is
     * queued: a larger batch must not take the place of a higher tier's query.
     */
    private static <P> boolean displaces(ModelScheduler<P> s, List<Query<P>> early, int drop, long answerOne) {
        int lowest = Priority.CRITICAL.ordinal();
        for (Priority p : Priority.values()) {
            if (s.queue.queued(p) > 0) {
                lowest = p.ordinal();
            }
        }
        for (Query<P> q : early) {
            lowest = Math.max(lowest, q.tenant().priority().ordinal());
        }
        for (int i = 0; i < drop; i++) {
            Query<P> q = early.get(i);
            if (q.tenant().priority().ordinal() < lowest && q.deadline() >= answerOne) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether the arrivals are under {@link #CONSERVING_LOAD} of what the available lanes serve
     * with the largest batch that answers within half the SLO (a query may wait for one batch,
     * then ride in the next), both on the batches' median cost.
     */
    private static boolean belowCapacity(ModelScheduler<?> s, ReplicaProfile profile, long now) {
        long overhead = profile.overheadNanos();
        // throughput is the typical batch's, not the upper quartile that deadlines are planned on:
        // planned on that, jittered batches made 0.67x look like 0.8x and the batches wait to grow
        double spread = profile.spreadFactor();
        int b = Math.max(1, profile.largestWithin(Math.round((s.config().sloNanos() / 2 - overhead) * spread),
                s.config().batchCap()));
        double perLane = b * 1e9 / Math.max(1, profile.serviceNanos(b) / spread + overhead);
        return s.arrivalRate(now) < CONSERVING_LOAD * perLane * s.availableLanes();
    }

    /** β·λ: the queries that arrive while a batch pays its fixed cost; waiting for fewer wastes that cost. */
    private static int fillTarget(ModelScheduler<?> s, ReplicaProfile profile, int cap, long now) {
        long one = profile.serviceNanos(1);
        long alpha = Math.max(0, profile.serviceNanos(2) - one);
        double betaSeconds = Math.max(0, one - alpha) / 1e9;
        return (int) Math.min(cap, Math.max(1, Math.ceil(betaSeconds * s.arrivalRate(now))));
    }
}
