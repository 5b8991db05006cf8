package io.servegate.sim.rollout;

import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutDecider;
import io.servegate.core.rollout.RolloutEvidence;
import io.servegate.core.rollout.RolloutMode;
import io.servegate.core.rollout.VersionStats;
import java.util.ArrayDeque;
import java.util.SplittableRandom;

/**
 * A rollout in virtual time over the same {@link RolloutDecider} the gateway uses: queries arrive
 * at a fixed rate from a population of users, each is routed by the rollout's sticky assignment,
 * the answering version's latency decides an SLO miss, and a feedback label for a fraction of the
 * queries arrives after a delay. While the candidate warms up, every query is copied to it (the
 * simulation has no capacity to run out of) and each copy counts as one warm-up. The decider runs
 * after every event.
 *
 * @param baseline         the current version
 * @param candidate        the version rolled out
 * @param ratePerSecond    queries per second
 * @param users            distinct uids, drawn uniformly
 * @param sloMillis        the app's latency objective
 * @param feedbackDelayMs  how long after its query a label arrives
 * @param feedbackFraction the fraction of queries that get a label
 * @param seed             random seed
 */
public record RolloutRun(SimVersion baseline, SimVersion candidate, double ratePerSecond, int users,
        double sloMillis, long feedbackDelayMs, double feedbackFraction, long seed) {

    private record Pending(long atMillis, boolean candidate, double loss) {
    }

    /** Runs {@code rollout} (started at time 0) for at most {@code maxMillis} or until it is final. */
    public RolloutOutcome run(Rollout rollout, long maxMillis) {
        SplittableRandom rnd = new SplittableRandom(seed);
        ArrayDeque<Pending> feedback = new ArrayDeque<>();
        RolloutEvidence e = RolloutEvidence.EMPTY;
        Rollout r = rollout;
        long queries = 0;
        long onCandidate = 0;
        long candidateAnswers = 0;
        long baselineAnswers = 0;
        double gapMillis = 1000.0 / ratePerSecond;
        long now = 0;
        for (long i = 0; now <= maxMillis && !r.status().isFinal(); i++) {
            now = (long) (i * gapMillis);
            while (!feedback.isEmpty() && feedback.peekFirst().atMillis() <= now) {
                Pending p = feedback.pollFirst();
                e = p.candidate()
                        ? new RolloutEvidence(e.candidate().withFeedback(p.loss()), e.baseline(), e.warmups())
                        : new RolloutEvidence(e.candidate(), e.baseline().withFeedback(p.loss()), e.warmups());
                r = RolloutDecider.decide(r, e, now);
            }
            if (r.status().isFinal()) {
                break;
            }
            queries++;
            if (r.warming()) {
                // a copy: the candidate answers it (using up a cold answer), and its latency counts for nothing
                candidate.latency(rnd, candidateAnswers++);
                e = e.withWarmup();
            }
            boolean toCandidate = r.routesToCandidate("u" + rnd.nextInt(users));
            boolean label = rnd.nextDouble() < feedbackFraction;
            boolean baselineRight = rnd.nextDouble() < baseline.accuracy();
            VersionStats b = e.baseline();
            VersionStats c = e.candidate();
            if (!toCandidate || r.mode() == RolloutMode.SHADOW) {
                b = b.withQuery(baseline.latency(rnd, baselineAnswers++) > sloMillis, false);
                if (label) {
                    feedback.addLast(new Pending(now + feedbackDelayMs, false, baselineRight ? 0 : 1));
                }
            }
            if (toCandidate) {
                onCandidate++;
                boolean candidateRight = rnd.nextDouble() < candidate.accuracy();
                c = c.withQuery(candidate.latency(rnd, candidateAnswers++) > sloMillis, false);
                if (r.mode() == RolloutMode.SHADOW) {
                    // the user got the baseline's answer; the copy is only compared (right or wrong alike) and labelled
                    c = c.withComparison(candidateRight == baselineRight);
                }
                if (label) {
                    feedback.addLast(new Pending(now + feedbackDelayMs, true, candidateRight ? 0 : 1));
                }
            }
            e = new RolloutEvidence(c, b, e.warmups());
            r = RolloutDecider.decide(r, e, now);
        }
        return new RolloutOutcome(r, queries, onCandidate, now);
    }
}
