package io.servegate.core.rollout;

/** Where a rollout is; the last four are final. */
public enum RolloutStatus {
    /** Routing by the current step and deciding. */
    RUNNING,
    /** Routing by the current step, not deciding (an operator paused it). */
    PAUSED,
    /** A canary whose every step held: the candidate is the current version. */
    PROMOTED,
    /** A shadow whose guards held: ready for a canary. */
    PASSED,
    /** A guard was breached: no query goes to the candidate any more. */
    ROLLED_BACK,
    /** An operator aborted it: no query goes to the candidate any more. */
    ABORTED;

    /** @return whether no decision will change this rollout again */
    public boolean isFinal() {
        return this != RUNNING && this != PAUSED;
    }
}
