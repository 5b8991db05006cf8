package io.servegate.core.scheduling;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * A model's waiting queries, earliest deadline first (ties in arrival order), that also knows
 * its oldest query by arrival for Clipper's delayed batching. Queries leave in deadline order,
 * i.e. from anywhere in arrival order, so the arrival list is intrusive and unlinks in O(1):
 * it stays exactly as long as the queue.
 *
 * <p>It also knows whose queries it holds ({@link Tenant}): {@link #take} fills a batch from the
 * highest tier first; within a tier, from the apps whose earliest query is already due (within the
 * tightest SLO) before those that can still wait, and among those from the app that has had the
 * least model time for its weight (start-time fair queueing on the model time each batch is
 * predicted to take, shared by its queries). While one app's queries are queued, that is plain
 * earliest-deadline order.
 */
final class DeadlineQueue<P> {

    private static final Comparator<Query<?>> EDF =
            Comparator.<Query<?>>comparingLong(Query::deadline).thenComparingLong(q -> q.seq);

    private final PriorityQueue<Query<P>> byDeadline = new PriorityQueue<>(EDF);
    private Query<P> oldest;
    private Query<P> newest;
    private long nextSeq;
    /** Apps with queries queued. */
    private final Map<String, AppShare> shares = new HashMap<>();
    private final int[] queuedByTier = new int[Priority.values().length];
    /** Per tier, the model time (over weight) at which its last query taken started: where a returning app starts. */
    private final double[] virtualTime = new double[Priority.values().length];

    /** One app's queries queued, and the model time it has had over its weight (its fair-queueing tag). */
    static final class AppShare {
        final Tenant tenant;
        int queued;
        double served;

        AppShare(Tenant tenant, double served) {
            this.tenant = tenant;
            this.served = served;
        }
    }

    void add(Query<P> q) {
        q.seq = nextSeq++;
        byDeadline.add(q);
        Tenant t = q.tenant();
        // an app that had nothing queued starts at its tier's virtual time: idle time earns no credit
        shares.computeIfAbsent(t.app(), a -> new AppShare(t, virtualTime[t.priority().ordinal()])).queued++;
        queuedByTier[t.priority().ordinal()]++;
        q.older = newest;
        q.newer = null;
        if (newest == null) {
            oldest = q;
        } else {
            newest.newer = q;
        }
        newest = q;
    }

    /** The query with the earliest deadline, or null. */
    Query<P> peek() {
        return byDeadline.peek();
    }

    /** Removes and returns the query with the earliest deadline, or null. */
    Query<P> poll() {
        Query<P> q = byDeadline.poll();
        if (q != null) {
            unlink(q);
            charge(q, 0);
        }
        return q;
    }

    /**
     * Removes {@code count} queries for one batch, each charged {@code costEach} of model time
     * (nanoseconds; the batch's predicted time over its size): with {@code byTier} the highest
     * tier's first, within a tier (every tier, without it) the apps whose earliest queued query is
     * due by {@code dueBy} first (an app with a longer SLO takes no place that a query due sooner
     * needs), then the app with the least model time for its weight, each app's earliest deadline
     * first. With one app queued, the {@code count} earliest deadlines.
     */
    List<Query<P>> take(int count, double costEach, boolean byTier, long dueBy) {
        List<Query<P>> items = new ArrayList<>(count);
        if (shares.size() <= 1) {
            for (int i = 0; i < count; i++) {
                Query<P> q = byDeadline.poll();
                unlink(q);
                charge(q, costEach);
                items.add(q);
            }
            return items;
        }
        List<Query<P>> all = new ArrayList<>(byDeadline);
        all.sort(EDF);
        Map<String, ArrayDeque<Query<P>>> byApp = new LinkedHashMap<>();
        for (Query<P> q : all) {
            byApp.computeIfAbsent(q.tenant().app(), a -> new ArrayDeque<>()).add(q);
        }
        while (items.size() < count) {
            ArrayDeque<Query<P>> next = null;
            AppShare best = null;
            int bestTier = 0;
            boolean bestDue = false;
            for (ArrayDeque<Query<P>> queue : byApp.values()) {
                if (queue.isEmpty()) {
                    continue;
                }
                AppShare share = shares.get(queue.peek().tenant().app());
                int tier = byTier ? share.tenant.priority().ordinal() : 0;
                boolean due = queue.peek().deadline() <= dueBy;
                if (best == null || tier < bestTier || (tier == bestTier && (due && !bestDue
                        || due == bestDue && share.served < best.served))) {
                    best = share;
                    bestTier = tier;
                    bestDue = due;
                    next = queue;
                }
            }
            Query<P> q = next.poll();
            byDeadline.remove(q);
            unlink(q);
            charge(q, costEach);
            items.add(q);
        }
        items.sort(EDF);
        return items;
    }

    int size() {
        return byDeadline.size();
    }

    /** Queries due by {@code t}: a walk of the whole queue. */
    int dueBy(long t) {
        int n = 0;
        for (Query<P> q : byDeadline) {
            if (q.deadline() <= t) {
                n++;
            }
        }
        return n;
    }

    /** Apps with queries queued. */
    int apps() {
        return shares.size();
    }

    /** Queries of tier {@code p} queued. */
    int queued(Priority p) {
        return queuedByTier[p.ordinal()];
    }

    /** The highest tier with a query queued; null when empty. */
    Priority topTier() {
        for (Priority p : Priority.values()) {
            if (queuedByTier[p.ordinal()] > 0) {
                return p;
            }
        }
        return null;
    }

    /** Queries queued of the tiers above {@code p}. */
    int queuedAbove(Priority p) {
        int n = 0;
        for (int t = 0; t < p.ordinal(); t++) {
            n += queuedByTier[t];
        }
        return n;
    }

    /** The apps with queries queued. */
    Collection<AppShare> shares() {
        return shares.values();
    }

    /** The app's queries queued, 0 when none. */
    int queued(String app) {
        AppShare s = shares.get(app);
        return s == null ? 0 : s.queued;
    }

    boolean isEmpty() {
        return byDeadline.isEmpty();
    }

    /** Arrival time of the longest-waiting query; the queue must not be empty. */
    long oldestArrival() {
        return oldest.arrival();
    }

    /** Removes everything, earliest deadline first. */
    List<Query<P>> drain() {
        List<Query<P>> all = new ArrayList<>(byDeadline.size());
        Query<P> q;
        while ((q = poll()) != null) {
            all.add(q);
        }
        return all;
    }

    /** {@code q} left the queue; {@code cost} of model time is its app's, over its weight. */
    private void charge(Query<P> q, double cost) {
        Tenant t = q.tenant();
        int tier = t.priority().ordinal();
        queuedByTier[tier]--;
        AppShare share = shares.get(t.app());
        virtualTime[tier] = Math.max(virtualTime[tier], share.served);
        share.served += cost / t.weight();
        if (--share.queued == 0) {
            shares.remove(t.app());
        }
    }

    private void unlink(Query<P> q) {
        if (q.older == null) {
            oldest = q.newer;
        } else {
            q.older.newer = q.newer;
        }
        if (q.newer == null) {
            newest = q.older;
        } else {
            q.newer.older = q.older;
        }
        q.older = null;
        q.newer = null;
    }
}
