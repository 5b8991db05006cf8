package io.servegate.core.rollout;

/** How a rollout exposes its candidate version. */
public enum RolloutMode {
    /** A fraction of queries is also sent to the candidate; users always get the baseline's answer. */
    SHADOW,
    /** The candidate answers a growing share of queries, step by step. */
    CANARY;

    /**
     * Parses a mode name, ignoring case and surrounding blanks.
     *
     * @throws IllegalArgumentException naming the accepted values
     */
    public static RolloutMode parse(String name) {
        if (name != null) {
            for (RolloutMode m : values()) {
                if (m.name().equalsIgnoreCase(name.trim())) {
                    return m;
                }
            }
        }
        throw new IllegalArgumentException("unknown rollout mode " + (name == null ? "null" : "'" + name + "'")
                + "; accepted: shadow, canary");
    }
}
