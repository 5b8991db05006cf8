package io.servegate.sim;

import java.util.Locale;

/** How a many-model run decides which models its multi-model replicas hold. */
public enum ModelPlacement {
    /**
     * On demand: the core's {@link io.servegate.core.scheduling.MultiModelScheduler} loads a model
     * when a query needs it and evicts the least recently used to make room.
     */
    LRU,
    /**
     * Fixed at start: every replica holds the most popular models that make up its budget; queries
     * for any other model are answered with the default at once (reason {@code no_replica}).
     */
    STATIC;

    /** Lower-case name, as the command line spells it. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The placement spelled {@code id} (case-insensitive).
     *
     * @throws IllegalArgumentException naming the known placements when {@code id} is none of them
     */
    public static ModelPlacement of(String id) {
        for (ModelPlacement p : values()) {
            if (p.id().equalsIgnoreCase(id.trim())) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown placement '" + id + "': expected lru or static");
    }
}
