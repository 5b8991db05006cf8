package io.servegate.core.autoscaling;

/**
 * A change of the number of replicas an {@link Autoscaler} asks for.
 *
 * @param atNanos when it was decided
 * @param from    replicas before
 * @param to      replicas asked for
 * @param reason  why
 * @param detail  the numbers behind it, for people
 */
public record ScalingDecision(long atNanos, int from, int to, ScalingReason reason, String detail) {

    /** Whether it adds replicas. */
    public boolean up() {
        return to > from;
    }
}
