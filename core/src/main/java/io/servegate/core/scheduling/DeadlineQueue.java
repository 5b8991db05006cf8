package io.servegate.core.scheduling;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A model's waiting queries, earliest deadline first (ties in arrival order), that also knows
 * its oldest query by arrival for Clipper's delayed batching. Queries leave in deadline order,
 * i.e. from anywhere in arrival order, so the arrival list is intrusive and unlinks in O(1):
 * it stays exactly as long as the queue.
 */
final class DeadlineQueue<P> {

    private static final Comparator<Query<?>> EDF =
            Comparator.<Query<?>>comparingLong(Query::deadline).thenComparingLong(q -> q.seq);

    private final PriorityQueue<Query<P>> byDeadline = new PriorityQueue<>(EDF);
    private Query<P> oldest;
    private Query<P> newest;
    private long nextSeq;

    void add(Query<P> q) {
        q.seq = nextSeq++;
        byDeadline.add(q);
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
        }
        return q;
    }

    int size() {
        return byDeadline.size();
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
