package io.servegate.core.selection;

import java.util.List;
import java.util.Map;

/**
 * One observation of a {@link WeightedPolicy}, independent of the state it is applied to: an
 * amount to subtract from each model's natural-log weight. Applying it
 * ({@link #applyTo}) subtracts, {@linkplain WeightedState normalizes} and counts one observation.
 *
 * <p>Because a step needs no state to be computed, a state store can apply it where the state
 * lives, atomically, without reading the state first (the gateway's Redis store runs this same
 * arithmetic in a Lua script; a test checks both give the same state bit for bit).
 *
 * @param decrements model name → the amount subtracted from its log weight; finite; models the
 *                   state does not know are ignored, models absent here are unchanged
 */
public record WeightedStep(Map<String, Double> decrements) {

    /**
     * @throws IllegalArgumentException if {@code decrements} is null or holds a null or
     *                                  non-finite amount
     */
    public WeightedStep {
        if (decrements == null) {
            throw new IllegalArgumentException("decrements must not be null");
        }
        decrements.forEach((m, d) -> {
            if (d == null || !Double.isFinite(d)) {
                throw new IllegalArgumentException("decrement for '" + m + "' must be finite, got " + d);
            }
        });
        decrements = Map.copyOf(decrements);
    }

    /**
     * @param state the state to update
     * @return a new state: each known model's log weight minus its decrement, normalized, with
     *         one more observation
     */
    public WeightedState applyTo(WeightedState state) {
        double[] lw = state.logWeights();
        List<String> models = state.models();
        for (int i = 0; i < lw.length; i++) {
            Double d = decrements.get(models.get(i));
            if (d != null) {
                lw[i] -= d;
            }
        }
        return new WeightedState(models, WeightedState.normalize(lw), state.observations() + 1);
    }
}
