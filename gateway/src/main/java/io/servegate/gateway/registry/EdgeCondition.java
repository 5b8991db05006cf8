package io.servegate.gateway.registry;

/**
 * The condition of a pipeline edge on its source stage's answer.
 *
 * @param kind      what is tested
 * @param threshold the confidence it is compared with, in [0, 1]
 */
public record EdgeCondition(ConditionKind kind, double threshold) {

    /** Whether the edge is taken when its source answered with {@code confidence}. */
    public boolean holds(double confidence) {
        return kind.holds(confidence, threshold);
    }
}
