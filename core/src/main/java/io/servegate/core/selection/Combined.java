package io.servegate.core.selection;

/**
 * The result of {@link SelectionPolicy#combine}: one output for the query and how much to trust it.
 *
 * @param output     the combined prediction
 * @param confidence in {@code [0, 1]}: for an ensemble, the weighted share of the <em>selected</em>
 *                   models that agree with {@code output} (stragglers count as disagreeing);
 *                   {@code 1} for single-model policies
 * @param answered   how many selected models contributed an output
 * @param selected   how many models were selected (queried)
 */
public record Combined(String output, double confidence, int answered, int selected) {

    /**
     * @throws IllegalArgumentException if {@code output} is null, {@code confidence} is outside
     *                                  {@code [0, 1]}, or the counts are not
     *                                  {@code 0 <= answered <= selected}
     */
    public Combined {
        if (output == null) {
            throw new IllegalArgumentException("output must not be null");
        }
        // Also rejects NaN.
        if (!(confidence >= 0.0 && confidence <= 1.0)) {
            throw new IllegalArgumentException("confidence must be in [0, 1], got " + confidence);
        }
        if (answered < 0 || answered > selected) {
            throw new IllegalArgumentException("need 0 <= answered <= selected, got answered=" + answered
                    + ", selected=" + selected);
        }
    }
}
