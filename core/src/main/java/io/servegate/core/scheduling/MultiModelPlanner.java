package io.servegate.core.scheduling;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * How a {@link MultiModelScheduler} plans (Clockwork, OSDI'20, §4.5, §5.3, across models):
 * replicas are considered free earliest first (one that can answer no waiting model in time is
 * passed over); of the models a replica can answer in time, the one whose earliest deadline comes
 * first gets the largest batch of its earliest deadlines predicted to answer before the first of
 * them, after a load where the replica does not hold it. Queries that no replica could answer in
 * time even alone, counting the load, are answered with the default at once
 * ({@link RejectReason#INFEASIBLE}).
 *
 * <p>A model is loaded onto a replica when its earliest query can be answered in time there and no
 * replica that already holds it could answer that query in time: a second copy appears when the
 * first cannot keep up. Under overload that alone is not enough: the queries its holders cannot
 * answer in time are dropped as infeasible first, so its earliest query is always one they can
 * answer. A model that dropped queries while all its holders were busy, since its last load, is
 * therefore also loaded onto a replica that has nothing else to do. So is a model that no replica
 * holds and whose queries, more than one lately, could not be answered in time after a load (its
 * load takes longer than its SLO, or than the time they had left): they get the default at once,
 * and the queries after them find it held. The scheduler owns the state and carries the decisions out.
 */
final class MultiModelPlanner<P> {

    /**
     * Queries of a model held nowhere answered with the default for want of a timely load, within
     * the sample age limit, before it is loaded for the queries after them: one query of a rarely
     * used model must not evict a model in use.
     */
    static final int LOAD_AFTER_DROPS = 2;

    private final MultiModelScheduler<P> s;
    private final SchedulerConfig config;

    MultiModelPlanner(MultiModelScheduler<P> scheduler, SchedulerConfig config) {
        this.s = scheduler;
        this.config = config;
    }

    /** Sends batches and loads until no replica can take one now, and asks to be woken when one can. */
    void schedule(long now) {
        while (!s.waiting.isEmpty()) {
            rejectUnanswerable(now);
            boolean sent = false;
            for (SharedReplica r : byFreeTime()) {
                long overhead = r.overheadNanos();
                if (r.outstandingBatches() > 0 && now < r.freeAt() - overhead) {
                    s.wakeAt(r.freeAt() - overhead); // sent ahead by the overhead, not sooner
                    continue;
                }
                if (sendTo(r, now)) {
                    sent = true;
                    break;
                }
            }
            if (!sent) {
                break;
            }
        }
        loadUnloaded(now);
    }

    /**
     * Loads, on each replica with nothing outstanding, the model that most recently had
     * {@value #LOAD_AFTER_DROPS} or more of its queries answered with the default, within the sample
     * age limit, for want of a load that could finish in time ({@link #rejectUnanswerable}), if it
     * fits there once unpinned models are evicted. Without this, a model whose load takes longer than
     * its SLO was never loaded: each of its queries alone could not be answered in time, so none
     * asked for the load. Only idle replicas: the load delays no batch already planned. Requests
     * older than the sample age limit are forgotten.
     */
    private void loadUnloaded(long now) {
        if (s.unloaded.isEmpty()) {
            return;
        }
        s.unloaded.removeIf(m -> s.heldAnywhere(m) || now - m.unloadedDropAt > config.profileMaxAgeNanos());
        for (SharedReplica r : byFreeTime()) {
            if (!r.idle()) {
                continue;
            }
            ServedModel<P> chosen = null;
            for (ServedModel<P> m : s.unloaded) {
                if (r.canMakeRoom(m)) {
                    chosen = m; // the last that fits: the most recently asked for
                }
            }
            if (chosen != null) {
                s.unloaded.remove(chosen);
                s.makeReady(r, chosen, startOn(r, r.overheadNanos(), now), now);
            }
        }
    }

    /**
     * Sends {@code r} its next batch, after a load when it does not hold the batch's model: of the
     * models it can answer in time, the one whose earliest deadline comes first. A model it could
     * answer in time only as a {@link #probeAnswer probe} gets a batch of one, planned without the
     * estimates too old to trust. False when none.
     *
     * <p>Where another model that {@code r} holds has a higher tier queued (apps of different
     * tiers on models that share replicas), the batch is no larger than lets that model's
     * higher-tier queries, in one batch after it, still answer its earliest query in time, and where
     * not even a batch of one does, that model goes first. Without this a sheddable app's model,
     * whose queries were due first as often as not, took the replica from a critical app's model
     * (MultiModelTierTest).
     */
    private boolean sendTo(SharedReplica r, long now) {
        ServedModel<P> best = null;
        boolean bestProbes = false;
        for (ServedModel<P> m : s.waiting) {
            Query<P> head = m.queue.peek();
            if (!r.holds(m.id) && (!r.canMakeRoom(m) || heldInTimeElsewhere(m, r, head.deadline(), now))) {
                continue;
            }
            boolean probes = head.deadline() < earliestAnswer(m, r, now);
            if (probes && head.deadline() < probeAnswer(m, r, now)) {
                continue;
            }
            if (best == null || head.deadline() < best.queue.peek().deadline()) {
                best = m;
                bestProbes = probes;
            }
        }
        if (best == null) {
            return r.idle() && addCopy(r, now);
        }
        int cap = Math.min(best.queue.size(), config.batchCap());
        ServedModel<P> guarded = guarded(r, best, now);
        if (guarded != null) {
            int fits = fitsBefore(r, best, guarded, cap, now);
            if (fits == 0) {
                send(r, guarded, false, Math.min(guarded.queue.size(), config.batchCap()), now);
                return true;
            }
            cap = fits;
        }
        send(r, best, bestProbes, cap, now);
        return true;
    }

    /**
     * Of the models {@code r} holds and can answer in time that have a higher tier queued than
     * {@code best}, the one due first; null if none.
     */
    private ServedModel<P> guarded(SharedReplica r, ServedModel<P> best, long now) {
        ServedModel<P> guarded = null;
        for (ServedModel<P> m : s.waiting) {
            if (m != best && r.holds(m.id) && m.queue.topTier().compareTo(best.queue.topTier()) < 0
                    && m.queue.peek().deadline() >= earliestAnswer(m, r, now)
                    && (guarded == null || m.queue.peek().deadline() < guarded.queue.peek().deadline())) {
                guarded = m;
            }
        }
        return guarded;
    }

    /**
     * The largest batch of {@code m}, up to {@code cap}, after which {@code guarded}'s queries of the
     * tiers above {@code m}'s, in one batch, still answer its earliest query in time; 0 if none.
     */
    private int fitsBefore(SharedReplica r, ServedModel<P> m, ServedModel<P> guarded, int cap, long now) {
        if (!m.profile.known()) {
            return cap;
        }
        long overhead = r.overheadNanos();
        long start = startOn(r, overhead, now) + (r.holds(m.id) ? 0 : m.loadNanos);
        int higher = Math.min(config.batchCap(), guarded.queue.queuedAbove(m.queue.topTier()));
        long finishBy = guarded.queue.peek().deadline() - tail(overhead) - guarded.serviceNanos(higher);
        return m.profile.largestWithin(finishBy - start, cap);
    }

    /** Sends {@code r} a batch of {@code m}, of at most {@code cap} queries, planned as {@link #sendTo} says. */
    private void send(SharedReplica r, ServedModel<P> m, boolean probes, int cap, long now) {
        if (probes) {
            r.probedAt = now;
        }
        long overhead = probes && !r.overheadFresh(now) ? 0 : r.overheadNanos();
        boolean planService = m.profile.known() && !(probes && !m.profile.fresh(now));
        long batchStart = s.makeReady(r, m, startOn(r, overhead, now), now);
        long budget = m.queue.peek().deadline() - batchStart - tail(overhead);
        int b = planService && !probes ? Math.max(1, m.profile.largestWithin(budget, cap)) : 1;
        s.send(r, m, b, batchStart, batchStart + (planService ? m.serviceNanos(b) : 0), now);
    }

    /**
     * Whether {@code q}, a query of {@code m} not yet queued, may be: it is critical, or no higher
     * tier is queued on the replicas that hold {@code m}, or it is predicted to be answered in time
     * after them: the earliest those replicas are free, then the higher tiers' queued queries
     * (spread over the replicas), then its own tier's queued queries of {@code m} and itself, each
     * model's in batches of the size it was recently sent, since under overload the batches shrink
     * with their deadlines and a batch of everything queued would promise more than is served.
     * Shed at once, a lower tier's query gets its default when it arrives instead of near its
     * deadline, when it would come up and be found infeasible (as {@link TierAdmission} does for
     * one model's replicas). Higher-tier queries still to arrive are not counted: the batch bound
     * of {@link #sendTo} keeps their time.
     */
    boolean admits(ServedModel<P> m, Query<P> q, long now) {
        Priority tier = q.tenant().priority();
        if (tier == Priority.CRITICAL) {
            return true;
        }
        List<SharedReplica> holders = new ArrayList<>();
        long free = Long.MAX_VALUE;
        long tail = 0;
        for (SharedReplica r : s.replicas.values()) {
            if (r.available() && r.holds(m.id)) {
                holders.add(r);
                long overhead = r.overheadNanos();
                long start = startOn(r, overhead, now);
                if (start < free) {
                    free = start;
                    tail = tail(overhead);
                }
            }
        }
        long higher = 0;
        for (ServedModel<P> x : s.waiting) {
            int n = x.queue.queuedAbove(tier);
            if (n > 0 && heldByAny(holders, x)) {
                higher += x.servingNanos(n, config.batchCap());
            }
        }
        if (higher == 0) {
            return true; // nothing of a higher tier to make room for (or no replica holds m yet: a load decides)
        }
        long own = m.servingNanos(m.queue.queued(tier) + 1, config.batchCap());
        return free + higher / holders.size() + own + tail <= q.deadline();
    }

    private static boolean heldByAny(List<SharedReplica> replicas, ServedModel<?> m) {
        for (SharedReplica r : replicas) {
            if (r.holds(m.id)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Answers with the default the queries that no available replica could answer in time even
     * alone (counting the load where their model is not held), nor as a probe, and those of models
     * that no available replica has the budget for.
     */
    private void rejectUnanswerable(long now) {
        for (Iterator<ServedModel<P>> it = s.waiting.iterator(); it.hasNext(); ) {
            ServedModel<P> m = it.next();
            long earliest = Long.MAX_VALUE;
            for (SharedReplica r : s.replicas.values()) {
                if (r.available() && r.budgetBytes >= m.sizeBytes) {
                    earliest = Math.min(earliest, Math.min(earliestAnswer(m, r, now), probeAnswer(m, r, now)));
                }
            }
            RejectReason reason = earliest == Long.MAX_VALUE ? RejectReason.NO_REPLICA : RejectReason.INFEASIBLE;
            Query<P> head;
            int dropped = 0;
            while ((head = m.queue.peek()) != null && head.deadline() < earliest) {
                s.reject(m.queue.poll(), reason);
                dropped++;
            }
            if (dropped > 0 && reason == RejectReason.INFEASIBLE) {
                if (holdersBusy(m)) {
                    m.overloadedAt = now;
                } else if (!s.heldAnywhere(m)
                        && m.droppedUnloaded(dropped, now, config.profileMaxAgeNanos()) >= LOAD_AFTER_DROPS) {
                    s.unloaded.remove(m);
                    s.unloaded.add(m);
                }
            }
            if (m.queue.isEmpty()) {
                it.remove();
            }
        }
    }

    /**
     * Loads onto idle {@code r} a copy of a waiting model that is overloaded on the replicas holding
     * it (it dropped queries while they were all busy, since it was last loaded), so that {@code r}
     * takes a share of its queue from the next round on. False when there is none, or none fits.
     */
    private boolean addCopy(SharedReplica r, long now) {
        for (ServedModel<P> m : s.waiting) {
            if (m.overloadedAt > m.loadedAt && !r.holds(m.id) && r.canMakeRoom(m)) {
                s.makeReady(r, m, Math.max(now + r.overheadNanos() / 2, r.freeAt()), now);
                return true;
            }
        }
        return false;
    }

    /** Whether some available replica holds {@code m} and every one that does has something outstanding. */
    private boolean holdersBusy(ServedModel<P> m) {
        boolean held = false;
        for (SharedReplica r : s.replicas.values()) {
            if (r.available() && r.holds(m.id)) {
                if (r.idle()) {
                    return false;
                }
                held = true;
            }
        }
        return held;
    }

    /** When a batch of one of {@code m} would answer at the earliest on {@code r}, loading it first if not held. */
    private long earliestAnswer(ServedModel<P> m, SharedReplica r, long now) {
        return answerAt(m, r, r.overheadNanos(), m.serviceNanos(1), now);
    }

    /**
     * When a batch of one of {@code m} sent to {@code r} as a probe would answer: {@code r} idle and
     * not probed within the sample age limit, and the estimates last measured longer ago than that
     * limit (its transport overhead, the model's service time) counting as nothing;
     * {@code Long.MAX_VALUE} when {@code r} may not be probed now or both estimates are recent. As
     * {@link ModelScheduler} probes a stale profile: an estimate measured during a slow spell (a cold
     * gateway or container, a starved machine) that made every query look infeasible would otherwise
     * never be measured again, and nothing would be sent for good. One probe per replica and age
     * limit: a rarely used model's service time is old most of the time, and probing each of them
     * would send queries that the estimates rightly find too late.
     */
    private long probeAnswer(ServedModel<P> m, SharedReplica r, long now) {
        boolean staleOverhead = !r.overheadFresh(now);
        boolean staleService = m.profile.known() && !m.profile.fresh(now);
        if (!r.idle() || !staleOverhead && !staleService
                || r.probedAt != Long.MIN_VALUE && now - r.probedAt <= config.profileMaxAgeNanos()) {
            return Long.MAX_VALUE;
        }
        return answerAt(m, r, staleOverhead ? 0 : r.overheadNanos(), staleService ? 0 : m.serviceNanos(1), now);
    }

    /** When a batch of one of {@code m} would answer on {@code r} with these estimates, loading it first if not held. */
    private long answerAt(ServedModel<P> m, SharedReplica r, long overhead, long service, long now) {
        return startOn(r, overhead, now) + (r.holds(m.id) ? 0 : m.loadNanos) + service + tail(overhead);
    }

    /** When a batch sent to {@code r} now can start: once it is free, and not before half a round trip. */
    private static long startOn(SharedReplica r, long overhead, long now) {
        return Math.max(now + overhead / 2, r.freeAt());
    }

    /** From the container's finish to the answer: the round trip's other half and the safety margin. */
    private long tail(long overhead) {
        return (overhead - overhead / 2) + config.safetyMarginNanos();
    }

    /** Whether another available replica holds {@code m} and could answer a query due at {@code deadline} in time. */
    private boolean heldInTimeElsewhere(ServedModel<P> m, SharedReplica except, long deadline, long now) {
        for (SharedReplica r : s.replicas.values()) {
            if (r != except && r.available() && r.holds(m.id)
                    && Math.min(earliestAnswer(m, r, now), probeAnswer(m, r, now)) <= deadline) {
                return true;
            }
        }
        return false;
    }

    /** Available replicas that can take a batch (fewer than two outstanding), free earliest first, ties in order of joining. */
    private List<SharedReplica> byFreeTime() {
        List<SharedReplica> out = new ArrayList<>(s.replicas.size());
        for (SharedReplica r : s.replicas.values()) {
            if (r.available() && r.outstandingBatches() < 2) {
                out.add(r);
            }
        }
        out.sort((a, b) -> Long.compare(a.freeAt(), b.freeAt()));
        return out;
    }
}
