package io.servegate.gateway.registry;

import java.util.Map;

/**
 * How an application chooses among its linked models: a selection policy by name with its
 * parameters, and the confidence below which the app answers its default output instead.
 *
 * @param policy              {@code single} (Clipper's released behaviour: the first linked model),
 *                            {@code exp3} or {@code exp4}
 * @param params              policy parameters as text, e.g. {@code eta}, {@code gamma}
 * @param confidenceThreshold answers whose confidence is below this get the default output; 0 = off
 */
public record SelectionConfig(String policy, Map<String, String> params, double confidenceThreshold) {

    /** The default: the single linked model, no threshold. */
    public static final SelectionConfig SINGLE = new SelectionConfig("single", Map.of(), 0);

    public SelectionConfig {
        // canonical name: "SINGLE" or " exp4" must behave exactly like "single" and "exp4" everywhere
        policy = policy == null || policy.isBlank() ? "single" : policy.trim().toLowerCase(java.util.Locale.ROOT);
        params = params == null ? Map.of() : Map.copyOf(params);
        if (!(confidenceThreshold >= 0 && confidenceThreshold <= 1)) {
            throw new IllegalArgumentException("confidence threshold must be in [0, 1], got " + confidenceThreshold);
        }
    }
}
