package io.servegate.gateway.rollout;

import io.servegate.core.rollout.RolloutEvidence;
import io.servegate.core.rollout.VersionStats;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;

/**
 * What this gateway observed of each rollout since it started here: the candidate's and the
 * baseline's queries, SLO misses and defaults, container errors and feedback losses, and the
 * candidate's warm-up copies. Adders, so
 * the query path only increments; shadow copies' agreement with the baseline counts on the
 * candidate's side; {@link RolloutDecisions} reads the sums and stores them for the
 * deciding gateway.
 */
public final class RolloutCounters {

    private final Map<String, Side[]> byRollout = new ConcurrentHashMap<>();

    /** Counts one answered query of a rollout's candidate or baseline. */
    public void query(String rolloutId, boolean candidate, boolean sloMiss, boolean error) {
        Side s = side(rolloutId, candidate);
        s.queries.increment();
        if (sloMiss) {
            s.sloMisses.increment();
        }
        if (error) {
            s.errors.increment();
        }
    }

    /** Counts one shadow copy's output compared with the baseline's answer on the same input. */
    public void comparison(String rolloutId, boolean agreed) {
        Side s = side(rolloutId, true);
        s.compared.increment();
        if (agreed) {
            s.agreements.increment();
        }
    }

    /** Counts one feedback label joined to an answer of the candidate or the baseline, with its loss in [0, 1]. */
    public void feedback(String rolloutId, boolean candidate, double loss) {
        Side s = side(rolloutId, candidate);
        s.feedback.increment();
        s.lossSum.add(loss);
    }

    /** Counts one warm-up copy the candidate answered (or its container failed); it counts for nothing else. */
    public void warmup(String rolloutId) {
        side(rolloutId, true).warmups.increment();
    }

    /** @return the figures this gateway holds for a rollout (empty if none) */
    public RolloutEvidence evidence(String rolloutId) {
        Side[] sides = byRollout.get(rolloutId);
        return sides == null ? RolloutEvidence.EMPTY
                : new RolloutEvidence(sides[1].stats(), sides[0].stats(), sides[1].warmups.sum());
    }

    /** Forgets rollouts other than {@code ids} (those that ended or were replaced). */
    public void retain(Collection<String> ids) {
        byRollout.keySet().retainAll(ids);
    }

    private Side side(String rolloutId, boolean candidate) {
        Side[] sides = byRollout.get(rolloutId);
        if (sides == null) {
            sides = byRollout.computeIfAbsent(rolloutId, k -> new Side[] {new Side(), new Side()});
        }
        return sides[candidate ? 1 : 0];
    }

    private static final class Side {
        final LongAdder queries = new LongAdder();
        final LongAdder sloMisses = new LongAdder();
        final LongAdder errors = new LongAdder();
        final LongAdder compared = new LongAdder();
        final LongAdder agreements = new LongAdder();
        final LongAdder feedback = new LongAdder();
        final DoubleAdder lossSum = new DoubleAdder();
        final LongAdder warmups = new LongAdder();

        VersionStats stats() {
            // read in this order so that a miss is never counted without its query
            long f = feedback.sum();
            double loss = lossSum.sum();
            long e = errors.sum();
            long m = sloMisses.sum();
            long a = agreements.sum();
            return new VersionStats(queries.sum(), m, e, compared.sum(), a, f, Math.max(0, loss));
        }
    }
}
