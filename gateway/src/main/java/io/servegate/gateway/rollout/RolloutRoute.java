package io.servegate.gateway.rollout;

import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutMode;
import io.servegate.core.rollout.RolloutStatus;

/**
 * What a rollout makes of one query of its model, chosen by {@link RolloutTraffic#route}: the one
 * place where a query's user key and the rollout's step decide, whichever way the query came (a
 * single-model app, a selection policy's call of the model, an Open Inference Protocol request).
 *
 * @param rollout the rollout that routes the model's queries
 * @param userKey the key the user was drawn by ({@code uid:<uid>}, {@code ctx:<context>},
 *                {@code id:<request id>}), or null when drawn at random
 * @param drawn   whether the user's point is below the step's share: answered by the candidate in
 *                a canary, copied to it in a shadow; while the candidate warms up, every query is
 *                drawn for a copy
 */
public record RolloutRoute(Rollout rollout, String userKey, boolean drawn) {

    /** @return whether the candidate answers the query (a drawn user of a canary that warmed up) */
    public boolean servedByCandidate() {
        return drawn && rollout.mode() != RolloutMode.SHADOW && !rollout.warming();
    }

    /** @return the version that answers the query: the candidate or the baseline */
    public String version() {
        return servedByCandidate() ? rollout.candidate() : rollout.baseline();
    }

    /** @return whether a copy of the query is due (a drawn user of a running shadow, or a warm-up) */
    boolean copied() {
        return drawn && rollout.status() == RolloutStatus.RUNNING
                && (rollout.mode() == RolloutMode.SHADOW || rollout.warming());
    }
}
