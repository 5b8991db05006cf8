package io.servegate.gateway.registry;

import java.util.Locale;

/** What a conditional pipeline edge tests on its source stage's answer. */
public enum ConditionKind {
    /** Taken when the source's confidence is below the threshold (a cascade's escalation). */
    CONFIDENCE_BELOW,
    /** Taken when the source's confidence is at least the threshold. */
    CONFIDENCE_AT_LEAST;

    /** The name in the admin API and in Redis. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Whether an edge with this condition and {@code threshold} is taken at {@code confidence}. */
    public boolean holds(double confidence, double threshold) {
        return this == CONFIDENCE_BELOW ? confidence < threshold : confidence >= threshold;
    }

    /** The value for a wire name. */
    public static ConditionKind fromWireName(String name) {
        return WireNames.parse(values(), ConditionKind::wireName, name, null, "when");
    }
}
