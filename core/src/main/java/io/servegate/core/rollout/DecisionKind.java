package io.servegate.core.rollout;

/** What a rollout decision did. */
public enum DecisionKind {
    /** The rollout was started. */
    START,
    /** The candidate answered its warm-up copies: the first step began. */
    WARMED,
    /** The canary moved to its next step. */
    ADVANCE,
    /** The canary's last step held: the candidate became the current version. */
    PROMOTE,
    /** A shadow's guards held. */
    PASS,
    /** A guard was breached. */
    ROLLBACK,
    /** An operator paused the rollout. */
    PAUSE,
    /** An operator resumed a paused rollout. */
    RESUME,
    /** An operator aborted the rollout. */
    ABORT
}
