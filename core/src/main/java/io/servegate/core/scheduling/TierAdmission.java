package io.servegate.core.scheduling;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

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
    private static final long RATE_TAU_NANOS = 1_000_000_000L;
    /** How long the decaying rates take to reach most (86 %) of a steady rate. */
    private static final long RAMP_NANOS = 2 * RATE_TAU_NANOS;
    /** The last arrival of any tier, and the first after the last pause longer than {@link #RAMP_NANOS}. */
    private long lastAny = Long.MIN_VALUE;
    private long rampFrom = Long.MIN_VALUE;

    private final ArrivalRate[] tierRates = new ArrivalRate[Priority.values().length];
    /** When each tier's latest query arrived; {@link Long#MIN_VALUE} before any. */
    private final long[] lastArrival = new long[Priority.values().length];
    /** The apps that arrived lately; one that stops is forgotten once its rate is under {@link #MIN_RATE}. */
    private final Map<String, AppRate> appRates = new HashMap<>();

    /** An app's arrivals per second. */
    private static final class AppRate {
        /** The app as its last query named it (an app added again may change tier or weight). */
        Tenant tenant;
        final ArrivalRate rate = new ArrivalRate(RATE_TAU_NANOS);

        AppRate(Tenant tenant) {
            this.tenant = tenant;
        }
    }

    TierAdmission() {
        for (int i = 0; i < tierRates.length; i++) {
            tierRates[i] = new ArrivalRate(RATE_TAU_NANOS);
            lastArrival[i] = Long.MIN_VALUE;
        }
    }

    /** A query for {@code t}'s app arrived. */
    void arrived(Tenant t, long now) {
        if (lastAny == Long.MIN_VALUE || now - lastAny > RAMP_NANOS) {
            rampFrom = now; // after a pause the decaying rates start from nothing again
        }
        lastAny = now;
        tierRates[t.priority().ordinal()].record(now);
        lastArrival[t.priority().ordinal()] = now;
        AppRate a = appRate(t);
        a.tenant = t;
        a.rate.record(now);
    }

    /**
     * Whether queries of two tiers or more arrived within the last {@code windowNanos}: a check
     * without the rates' arithmetic, for the decisions made while one tier has the version.
     */
    boolean tiersArrivedWithin(long windowNanos, long now) {
        int n = 0;
        for (long at : lastArrival) {
            if (at != Long.MIN_VALUE && now - at <= windowNanos) {
                n++;
            }
        }
        return n >= 2;
    }

    /**
     * Whether the version is short of capacity: its apps arrive at over {@value #OVER_CAPACITY} of
     * what its lanes serve in batches that answer within half the SLO (as {@link #admit} prices
     * them), or more queries are queued than the largest batch within the SLO on every lane takes
     * (a burst), or the rates are younger than {@link #RAMP_NANOS} (they start from nothing, so
     * the first second of an overload would look like light load).
     */
    <P> boolean overCapacity(ModelScheduler<P> s, ReplicaProfile profile, long now) {
        int lanes = s.availableLanes();
        if (lanes == 0 || now - rampFrom < RAMP_NANOS) {
            return true;
        }
        double cost = cost(s, profile, now);
        double total = 0;
        for (ArrivalRate r : tierRates) {
            total += r.perSecond(now);
        }
        return total >= OVER_CAPACITY * lanes * 1e9 / cost || s.queue.size() > lanes * largestWithinSlo(s, profile);
    }

    /** The largest batch, up to the configured cap, that answers within the SLO. */
    static int largestWithinSlo(ModelScheduler<?> s, ReplicaProfile profile) {
        return Math.max(1, profile.largestWithin(s.config().sloNanos() - profile.overheadNanos(), s.config().batchCap()));
    }

    /** Model time per query, nanoseconds, in the largest batch that answers within half the SLO. */
    private static double cost(ModelScheduler<?> s, ReplicaProfile profile, long now) {
        int b = batchWithinHalf(s, profile, now);
        return (double) (profile.serviceNanos(b) + profile.overheadNanos()) / b;
    }

    private static int batchWithinHalf(ModelScheduler<?> s, ReplicaProfile profile, long now) {
        return Math.max(1, profile.largestWithin(s.config().sloNanos() / 2 - profile.overheadNanos(),
                s.admissionBatchCap(profile, now)));
    }

    /** Arrivals per second of tier {@code p}'s apps. */
    double rate(Priority p, long now) {
        return tierRates[p.ordinal()].perSecond(now);
    }

    /**
     * Whether {@code q}, not yet queued, may be: it can be answered in time, or the model is
     * under capacity, or it is critical, or nothing is measured yet ({@code profile} null), or the
     * version is idle.
     */
    <P> boolean admit(ModelScheduler<P> s, Query<P> q, ReplicaProfile profile, long now) {
        Tenant t = q.tenant();
        int lanes = s.availableLanes();
        if (t.priority() == Priority.CRITICAL || profile == null || lanes == 0 || idle(s)) {
            return true;
        }
        long overhead = profile.overheadNanos();
        double cost = cost(s, profile, now); // model time per query, nanoseconds
        double capacity = lanes * 1e9 / cost; // queries per second
        double total = 0;
        double higher = 0;
        for (Priority p : Priority.values()) {
            double rate = tierRates[p.ordinal()].perSecond(now);
            total += rate;
            if (p.ordinal() < t.priority().ordinal()) {
                higher += rate;
            }
        }
        if (total < OVER_CAPACITY * capacity || !shared(t, higher, now)) {
            return true;
        }
        if (higher >= OVER_CAPACITY * capacity) {
            return false; // the higher tiers alone fill the version
        }
        // the higher tiers' arrivals meanwhile go first; riding the same batches, each adds its marginal cost
        long marginal = Math.max(1, profile.serviceNanos(2) - profile.serviceNanos(1));
        double reserved = higher * marginal / (lanes * 1e9);
        if (reserved >= 1) {
            return false;
        }
        // the model time its tier can still use before its deadline, less the fixed cost of the batch it rides
        double budget = (q.deadline() - now - profile.serviceNanos(1) - overhead) * lanes * (1 - reserved);
        for (Lane l : s.lanes) {
            if (l.replica.available) {
                budget -= Math.max(0, l.freeAt - now);
            }
        }
        for (Priority p : Priority.values()) {
            if (p.ordinal() < t.priority().ordinal()) {
                budget -= cost * s.queue.queued(p);
            }
        }
        return (s.queue.queued(t.app()) + 1) * cost <= budget * fairShare(t, Math.max(0, capacity - higher), now);
    }

    /**
     * Nothing queued and a replica with nothing outstanding: a query shed now would leave the
     * replica idle and help no one. Admission is judged on estimates (the transport overhead among
     * them) that only batches renew; shedding every query while idle would keep a wrong estimate
     * forever, since nothing would run to correct it.
     */
    private static boolean idle(ModelScheduler<?> s) {
        if (!s.queue.isEmpty()) {
            return false;
        }
        for (Lane l : s.lanes) {
            if (l.replica.available && l.outstanding.isEmpty()) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code t}'s share of its tier's capacity: max-min fair on the apps' measured arrival rates,
     * weighted (an app that asks for less than its weighted share gets what it asks, the rest is
     * split among the others by weight), as a fraction of what the tier's apps get together.
     */
    private double fairShare(Tenant t, double capacity, long now) {
        List<double[]> apps = new ArrayList<>(); // {rate, weight}; this app's first
        apps.add(new double[] {appRate(t).rate.perSecond(now), t.weight()});
        for (Iterator<AppRate> it = appRates.values().iterator(); it.hasNext(); ) {
            AppRate other = it.next();
            double rate = other.rate.perSecond(now);
            if (rate < MIN_RATE && !other.tenant.app().equals(t.app())) {
                it.remove(); // gone: forget it
            } else if (other.tenant.priority() == t.priority() && !other.tenant.app().equals(t.app())) {
                apps.add(new double[] {rate, other.tenant.weight()});
            }
        }
        double[] fair = new double[apps.size()];
        boolean[] fixed = new boolean[apps.size()];
        double left = capacity;
        boolean changed = true;
        while (changed) {
            changed = false;
            double weights = 0;
            for (int i = 0; i < fair.length; i++) {
                weights += fixed[i] ? 0 : apps.get(i)[1];
            }
            for (int i = 0; i < fair.length && weights > 0; i++) {
                double[] a = apps.get(i);
                if (!fixed[i] && a[0] <= left * a[1] / weights) {
                    fair[i] = a[0]; // asks for less than its share: gets it
                    fixed[i] = true;
                    left -= a[0];
                    changed = true;
                }
            }
            if (!changed) {
                for (int i = 0; i < fair.length; i++) {
                    if (!fixed[i]) {
                        fair[i] = left * apps.get(i)[1] / weights;
                    }
                }
            }
        }
        double sum = 0;
        for (double f : fair) {
            sum += f;
        }
        return sum <= 0 ? 1 : fair[0] / sum;
    }

    /**
     * Whether {@code t}'s app shares the model now: a higher tier or another app of its tier
     * arrives. An app alone is scheduled by the policy alone, as without tiers.
     */
    private boolean shared(Tenant t, double higherRate, long now) {
        if (higherRate >= MIN_RATE) {
            return true;
        }
        for (AppRate other : appRates.values()) {
            if (other.tenant.priority() == t.priority() && !other.tenant.app().equals(t.app())
                    && other.rate.perSecond(now) >= MIN_RATE) {
                return true;
            }
        }
        return false;
    }

    private AppRate appRate(Tenant t) {
        return appRates.computeIfAbsent(t.app(), a -> new AppRate(t));
    }
}
