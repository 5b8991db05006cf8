package io.servegate.core.rollout;

import java.util.Objects;

/**
 * What a rollout's decisions are made from: the candidate's and the baseline's statistics since
 * the rollout started.
 */
public record RolloutEvidence(VersionStats candidate, VersionStats baseline) {

    /** Nothing observed yet. */
    public static final RolloutEvidence EMPTY = new RolloutEvidence(VersionStats.EMPTY, VersionStats.EMPTY);

    public RolloutEvidence {
        Objects.requireNonNull(candidate, "candidate");
        Objects.requireNonNull(baseline, "baseline");
    }

    /** @return the sum of both, side by side */
    public RolloutEvidence plus(RolloutEvidence o) {
        return new RolloutEvidence(candidate.plus(o.candidate), baseline.plus(o.baseline));
    }
}
