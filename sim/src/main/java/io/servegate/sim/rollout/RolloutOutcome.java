package io.servegate.sim.rollout;

import io.servegate.core.rollout.Rollout;

/**
 * How a simulated rollout ended.
 *
 * @param rollout           the rollout at the end (status, history)
 * @param queries           queries sent in all
 * @param candidateAnswers  of those, answered by the candidate (canary) or copied to it (shadow)
 * @param finishedAtMillis  virtual time of the final decision, or of the run's end if there was none
 */
public record RolloutOutcome(Rollout rollout, long queries, long candidateAnswers, long finishedAtMillis) {

    /** @return the fraction of all queries the candidate answered */
    public double candidateFraction() {
        return queries == 0 ? 0 : (double) candidateAnswers / queries;
    }
}
