package io.servegate.core.rollout;

/** What one guard says about the evidence so far. */
public enum GuardVerdict {
    /** The limit is kept with the rollout's confidence. */
    HOLDS,
    /** Too little evidence either way. */
    UNDECIDED,
    /** The limit is exceeded with the rollout's confidence. */
    BREACHED
}
