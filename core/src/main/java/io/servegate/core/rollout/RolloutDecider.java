package io.servegate.core.rollout;

import java.util.List;
import java.util.stream.Collectors;

/**
 * Decides a running rollout's next move from its evidence (the decision rule; the bounds are
 * {@link GuardCheck}'s):
 * <ol>
 *   <li>while the candidate warms up, nothing is judged (no answer of it counts yet): once it has
 *       answered {@link Guards#warmupQueries} copies, the first step begins, its clock
 *       and query count from then;</li>
 *   <li>any guard {@link GuardVerdict#BREACHED}: roll back at once, whatever the step;</li>
 *   <li>every guard {@link GuardVerdict#HOLDS}, the candidate has {@code minFeedback} labels, and
 *       the step has lasted {@code minStepMillis} and seen {@code minStepQueries} candidate queries:
 *       advance to the next step, or promote (canary) or pass (shadow) after the last;</li>
 *   <li>otherwise hold: the rollout is returned unchanged.</li>
 * </ol>
 * Pure: the caller supplies the clock and the evidence, so the gateway and the simulator decide
 * alike.
 */
public final class RolloutDecider {

    private RolloutDecider() {
    }

    /** @return the rollout after this decision; the same instance when nothing changes */
    public static Rollout decide(Rollout r, RolloutEvidence e, long nowMillis) {
        if (r.status() != RolloutStatus.RUNNING) {
            return r;
        }
        if (r.warming()) {
            return e.warmups() < r.guards().warmupQueries() ? r
                    : r.with(DecisionKind.WARMED, RolloutStatus.RUNNING, 0, false, nowMillis, e.candidate().queries(),
                            "candidate warmed up: " + e.warmups() + " copies answered");
        }
        List<GuardValue> values = GuardCheck.evaluate(r.guards(), e);
        for (GuardValue v : values) {
            if (v.verdict() == GuardVerdict.BREACHED) {
                return r.with(DecisionKind.ROLLBACK, RolloutStatus.ROLLED_BACK, r.stepIndex(), false, nowMillis,
                        r.stepStartQueries(), "guard breached: " + v.describe() + "; candidate queries "
                                + e.candidate().queries() + ", feedback " + e.candidate().feedback());
            }
        }
        Guards g = r.guards();
        boolean allHold = values.stream().allMatch(v -> v.verdict() == GuardVerdict.HOLDS);
        long stepQueries = e.candidate().queries() - r.stepStartQueries();
        if (!allHold || e.candidate().feedback() < g.minFeedback() || stepQueries < g.minStepQueries()
                || nowMillis - r.stepStartedAtMillis() < g.minStepMillis()) {
            return r;
        }
        String reason = "guards hold: " + values.stream().map(GuardValue::describe).collect(Collectors.joining("; "))
                + "; candidate queries " + e.candidate().queries() + ", feedback " + e.candidate().feedback();
        int next = r.stepIndex() + 1;
        if (next < r.steps().size()) {
            return r.with(DecisionKind.ADVANCE, RolloutStatus.RUNNING, next, false, nowMillis, e.candidate().queries(),
                    reason);
        }
        return r.mode() == RolloutMode.CANARY
                ? r.with(DecisionKind.PROMOTE, RolloutStatus.PROMOTED, r.stepIndex(), false, nowMillis,
                        e.candidate().queries(), reason)
                : r.with(DecisionKind.PASS, RolloutStatus.PASSED, r.stepIndex(), false, nowMillis,
                        e.candidate().queries(), reason);
    }

    /** @return the guards' current values (for metrics and {@code get_rollout}) */
    public static List<GuardValue> guardValues(Rollout r, RolloutEvidence e) {
        return GuardCheck.evaluate(r.guards(), e);
    }
}
