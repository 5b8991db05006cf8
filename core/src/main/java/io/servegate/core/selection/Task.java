package io.servegate.core.selection;

/**
 * What a model's output means, which decides how the bandit policies measure a loss and how
 * {@link Exp4Policy} combines outputs.
 *
 * <ul>
 *   <li>{@link #CLASSIFICATION}: outputs are labels; an output is right (loss 0) if it equals
 *       the feedback label after trimming, or if both parse as the same decimal number
 *       ({@code "3"} equals {@code "3.0"}); otherwise wrong (loss 1).</li>
 *   <li>{@link #REGRESSION}: outputs and labels are decimal numbers; the loss is
 *       {@code min(1, |output − label| / scale)}, and an output that is not a number has loss 1.</li>
 * </ul>
 */
public enum Task {
    /** Outputs are class labels: 0/1 loss, weighted vote. */
    CLASSIFICATION,
    /** Outputs are numbers: scaled absolute loss, weighted mean. */
    REGRESSION;

    /**
     * The loss of one output against its feedback label, as the bandit policies measure it (see
     * the class comment); rollout guards compare versions with the same measure.
     *
     * @param output the model's output; {@code null} or a non-number (regression) has loss 1
     * @param label  the feedback label; for regression a decimal number
     * @param scale  the regression scale (ignored for classification), positive
     * @return the loss, in {@code [0, 1]}
     * @throws IllegalArgumentException if a regression label is not a number
     */
    public double loss(String output, String label, double scale) {
        return Outputs.loss(this, output, label, scale);
    }

    /**
     * Parses a task name, ignoring case and surrounding blanks.
     *
     * @param name {@code "classification"} or {@code "regression"}
     * @return the task
     * @throws IllegalArgumentException naming the accepted values if {@code name} is neither
     */
    public static Task parse(String name) {
        if (name != null) {
            String n = name.trim();
            for (Task t : values()) {
                if (t.name().equalsIgnoreCase(n)) {
                    return t;
                }
            }
        }
        throw new IllegalArgumentException("unknown task " + (name == null ? "null" : "'" + name + "'")
                + "; accepted: classification, regression");
    }
}
