package io.servegate.core.rollout;

/**
 * A rollout's guards: the limits its candidate must keep, and how sure a decision must be.
 *
 * <p>The SLO guard limits how much more often the candidate misses the app's SLO (or answers
 * with the default) than the baseline over the same period, so that what slows both versions (a
 * loaded machine, the network) is not held against the candidate; the error guard limits the
 * candidate's own rate of container errors; the loss guard limits how much worse the candidate's
 * mean feedback loss may be than the baseline's. A step advances only when every
 * guard holds with {@code confidence} (its upper confidence bound is within the limit), the step
 * has lasted {@code minStepMillis} and seen {@code minStepQueries} candidate queries, and the
 * candidate has {@code minFeedback} feedback labels; the rollout is rolled back as soon as one
 * guard is breached with {@code confidence} (its lower bound is above the limit).
 *
 * <p>Before any of that, a rollout with {@code warmupQueries} warms its candidate up: users' queries
 * are copied to it (as shadow copies, on spare capacity only) until it has answered that many,
 * and none of those answers counts for the guards. A freshly started candidate's first answers
 * are slow for reasons that pass (a JIT compiling, batch shapes met for the first time), and the
 * guards' bounds assume queries alike; judged cold, an equal candidate could be rolled back by
 * its first few answers.
 *
 * @param maxSloMissIncrease the candidate's rate of SLO misses and defaults minus the baseline's, in {@code [0, 1)}
 * @param maxErrorRate    the candidate's rate of container errors, in {@code [0, 1)}
 * @param maxLossIncrease the candidate's mean loss minus the baseline's, in {@code [0, 1)}
 * @param minFeedback     feedback labels on the candidate's answers before any step advances
 * @param confidence      of each decision, in {@code [0.5, 1)}: 0.99 by default, above the usual
 *                        0.95 because the bounds are looked at after every query
 * @param minStepQueries  candidate queries in a step before it may advance
 * @param minStepMillis   how long a step lasts at least
 * @param warmupQueries   shadow copies the candidate answers (or its container fails) before the first step; 0
 *                        starts the first step at once
 */
public record Guards(double maxSloMissIncrease, double maxErrorRate, double maxLossIncrease, long minFeedback,
        double confidence, long minStepQueries, long minStepMillis, long warmupQueries) {

    /** 1 % SLO misses, 1 % errors, 2 points of loss, 200 labels, 99 %, 100 queries and 10 s a step, 200 warm-ups. */
    public static final Guards DEFAULTS = new Guards(0.01, 0.01, 0.02, 200, 0.99, 100, 10_000, 200);

    public Guards {
        rate("max_slo_miss_increase", maxSloMissIncrease);
        rate("max_error_rate", maxErrorRate);
        rate("max_loss_increase", maxLossIncrease);
        if (minFeedback < 0 || minStepQueries < 0 || minStepMillis < 0 || warmupQueries < 0) {
            throw new IllegalArgumentException(
                    "min_feedback, min_step_queries, min_step_ms and warmup_queries must not be negative");
        }
        if (!(confidence >= 0.5 && confidence < 1)) {
            throw new IllegalArgumentException("confidence must be in [0.5, 1), was " + confidence);
        }
    }

    private static void rate(String name, double v) {
        if (!(v >= 0 && v < 1)) {
            throw new IllegalArgumentException(name + " must be in [0, 1), was " + v);
        }
    }
}
