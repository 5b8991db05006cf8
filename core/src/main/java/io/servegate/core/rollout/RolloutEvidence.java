package io.servegate.core.rollout;

import java.util.Objects;

/**
 * What a rollout's decisions are made from: the candidate's and the baseline's statistics since
 * the rollout started, and the warm-up copies the candidate answered (or its container failed)
 * before its first step, which count for nothing else.
 */
public record RolloutEvidence(VersionStats candidate, VersionStats baseline, long warmups) {

    /** Nothing observed yet. */
    public static final RolloutEvidence EMPTY = new RolloutEvidence(VersionStats.EMPTY, VersionStats.EMPTY, 0);

    public RolloutEvidence {
        Objects.requireNonNull(candidate, "candidate");
        Objects.requireNonNull(baseline, "baseline");
        if (warmups < 0) {
            throw new IllegalArgumentException("warm-up copies must not be negative, was " + warmups);
        }
    }

    /** Statistics of both versions, no warm-up copies. */
    public RolloutEvidence(VersionStats candidate, VersionStats baseline) {
        this(candidate, baseline, 0);
    }

    /** @return the sum of both, side by side */
    public RolloutEvidence plus(RolloutEvidence o) {
        return new RolloutEvidence(candidate.plus(o.candidate), baseline.plus(o.baseline), warmups + o.warmups);
    }

    /** @return this evidence with one more warm-up copy answered */
    public RolloutEvidence withWarmup() {
        return new RolloutEvidence(candidate, baseline, warmups + 1);
    }
}
