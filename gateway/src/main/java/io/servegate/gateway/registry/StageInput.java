package io.servegate.gateway.registry;

import java.util.Locale;

/** What a pipeline stage's model is given. */
public enum StageInput {
    /** The pipeline's own input (the query's). */
    QUERY,
    /** The output of the stage's one predecessor, parsed as the model's input type. */
    PREVIOUS;

    /** The name in the admin API and in Redis. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The value for a wire name; {@code null} is {@link #QUERY}. */
    public static StageInput fromWireName(String name) {
        return WireNames.parse(values(), StageInput::wireName, name, QUERY, "input");
    }
}
