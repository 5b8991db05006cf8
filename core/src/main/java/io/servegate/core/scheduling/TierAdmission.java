package io.servegate.core.scheduling;

/**
 * Which queries of a model version's lower tiers it takes while its arrivals exceed what it
 * serves ({@link ModelScheduler#submit}). Below {@value #OVER_CAPACITY} of capacity, or while an app
 * has the model to itself, every query is queued, as without tiers. Above it a query of a tier below {@link Priority#CRITICAL} is queued
 * only if it is predicted to be answered in time after the work ahead of it: what the lanes still
 * run, the higher tiers' queued queries, its own tier's queued queries as weighted fair shares
 * give them the model before it, and the higher tiers' arrivals meanwhile (capacity reserved
 * ahead of it). Otherwise it is rejected at once ({@link RejectReason#SHED}) rather than answered
 * late, and the capacity it would have taken stays with the queries that can use it.
 *
 * <p>Capacity is counted in model time: each query costs its share of the largest batch that
 * answers within half the SLO (a query may wait for one batch and ride the next), plus the
 * transport overhead; the queue's {@link DeadlineQueue#take} serves the tiers and shares this
 * admission assumes.
 */
final class TierAdmission {

    /** Load (arrivals over capacity) from which lower tiers are admitted against the capacity left. */
    static final double OVER_CAPACITY = 0.9;

    /** Arrivals per second under which a tier counts as gone. */
    static final double MIN_RATE = 0.5;

    private final ArrivalRate[] rates = new ArrivalRate[Priority.values().length];

    TierAdmission() {
        for (int i = 0; i < rates.length; i++) {
            rates[i] = new ArrivalRate(1_000_000_000L);
        }
    }

    /** A query of tier {@code p} arrived. */
    void arrived(Priority p, long now) {
        rates[p.ordinal()].record(now);
    }

    /**
     * Whether {@code q}, not yet queued, may be: it can be answered in time, or the model is
     * under capacity, or it is critical, or nothing is measured yet ({@code profile} null).
     */
    <P> boolean admit(ModelScheduler<P> s, Query<P> q, ReplicaProfile profile, long now) {
        Tenant t = q.tenant();
        int lanes = s.availableLanes();
        if (t.priority() == Priority.CRITICAL || profile == null || lanes == 0) {
            return true;
        }
        SchedulerConfig config = s.config();
        long overhead = profile.overheadNanos();
        int b = Math.max(1, profile.largestWithin(config.sloNanos() / 2 - overhead, config.batchCap()));
        long batchNanos = profile.serviceNanos(b) + overhead;
        double cost = (double) batchNanos / b; // model time per query, nanoseconds
        double laneNanosPerSecond = lanes * 1e9;
        double total = 0;
        double higher = 0;
        for (Priority p : Priority.values()) {
            double rate = rates[p.ordinal()].perSecond(now);
            total += rate;
            if (p.ordinal() < t.priority().ordinal()) {
                higher += rate;
            }
        }
        if (total * cost < OVER_CAPACITY * laneNanosPerSecond || !shared(s, t, higher)) {
            return true;
        }
        // the higher tiers' arrivals meanwhile go first; riding the same batches, each adds its marginal cost
        long marginal = Math.max(1, profile.serviceNanos(2) - profile.serviceNanos(1));
        double reserved = higher * marginal / laneNanosPerSecond;
        if (reserved >= 1) {
            return false;
        }
        double work = 0;
        for (Lane l : s.lanes) {
            if (l.replica.available) {
                work += Math.max(0, l.freeAt - now);
            }
        }
        for (Priority p : Priority.values()) {
            if (p.ordinal() < t.priority().ordinal()) {
                work += cost * s.queue.queued(p);
            }
        }
        // its tier under fair queueing: by the time its own queries (this one included) are served,
        // each other app of the tier has had as much model time per weight, or all it has queued
        double mine = (s.queue.queued(t.app()) + 1) * cost / t.weight();
        work += mine * t.weight();
        for (DeadlineQueue.AppShare other : s.queue.shares()) {
            if (other.tenant.priority() == t.priority() && !other.tenant.app().equals(t.app())) {
                work += Math.min(other.queued * cost, mine * other.tenant.weight());
            }
        }
        // it rides the batch after that work: its fixed cost is the part not yet counted
        double wait = work / lanes / (1 - reserved);
        return now + wait + profile.serviceNanos(1) + overhead <= q.deadline();
    }

    /**
     * Whether {@code t}'s app shares the model now: a higher tier arrives, or another app of its
     * tier has queries queued. An app alone is scheduled by the policy alone, as without tiers.
     */
    private static boolean shared(ModelScheduler<?> s, Tenant t, double higherRate) {
        if (higherRate >= MIN_RATE) {
            return true;
        }
        for (DeadlineQueue.AppShare other : s.queue.shares()) {
            if (other.tenant.priority() == t.priority() && !other.tenant.app().equals(t.app())) {
                return true;
            }
        }
        return false;
    }
}
