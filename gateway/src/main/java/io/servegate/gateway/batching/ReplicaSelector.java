package io.servegate.gateway.batching;

import java.util.List;
import java.util.function.ToIntFunction;

/**
 * Least-loaded replica choice, e.g. over {@link BatchQueue#load()} of each replica's queue.
 */
public final class ReplicaSelector {

    private ReplicaSelector() {
    }

    /**
     * Returns the candidate with the smallest load.
     *
     * <p>Ties go to the <em>first</em> minimal candidate in list order (no round-robin): loads
     * change with every routed query, so persistent ties are rare and a stateless choice keeps
     * this a pure function. The load of each candidate is read exactly once.
     *
     * @param candidates the replicas to choose from (may be empty, not null)
     * @param load       the load of a replica, e.g. {@code BatchQueue::load}
     * @param <R>        the replica type
     * @return the least-loaded candidate, or {@code null} if {@code candidates} is empty
     */
    public static <R> R leastLoaded(List<R> candidates, ToIntFunction<R> load) {
        R best = null;
        int bestLoad = Integer.MAX_VALUE;
        for (R candidate : candidates) {
            int l = load.applyAsInt(candidate);
            // Strict '<' keeps the first of equal minima; 'best == null' admits a first
            // candidate reporting Integer.MAX_VALUE.
            if (best == null || l < bestLoad) {
                best = candidate;
                bestLoad = l;
            }
        }
        return best;
    }
}
