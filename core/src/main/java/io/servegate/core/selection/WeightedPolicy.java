package io.servegate.core.selection;

import java.util.Map;

/**
 * A selection policy over a {@link WeightedState} ({@link Exp3Policy}, {@link Exp4Policy}) whose
 * observation of a prediction already made is a {@link WeightedStep}: once the selection
 * probabilities are known, the update does not depend on the state, so a store can apply it
 * server-side in one atomic step.
 */
public interface WeightedPolicy extends SelectionPolicy<WeightedState> {

    /**
     * The step that {@link #observe(Object, Object, String, Map, Map)} applies to a state that
     * knows every model of {@code outputs}.
     *
     * @param input         the query input (may be null)
     * @param label         the true output for {@code input}
     * @param outputs       model name → its prediction for {@code input}
     * @param probabilities model name → the probability it was selected with; required for every
     *                      model of {@code outputs} by policies that importance-weight (Exp3)
     * @return the step
     * @throws IllegalArgumentException if {@code label} is null or unusable for the policy's
     *                                  task, or a required probability is missing or not in
     *                                  {@code (0, 1]}
     */
    WeightedStep step(Object input, String label, Map<String, String> outputs, Map<String, Double> probabilities);
}
