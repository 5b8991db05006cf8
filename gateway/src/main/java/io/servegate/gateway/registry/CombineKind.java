package io.servegate.gateway.registry;

import java.util.Locale;

/** How a combine stage joins the labels of its predecessors (a parallel fan-out's branches). */
public enum CombineKind {
    /**
     * The label most of the predecessors that ran answered (ties: the predecessor listed first);
     * its confidence is the share of them that answered it.
     */
    MAJORITY;

    /** The name in the admin API and in Redis. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The value for a wire name; {@code null} stays null (a model stage). */
    public static CombineKind fromWireName(String name) {
        return name == null ? null
                : WireNames.parse(values(), CombineKind::wireName, name, null, "combine");
    }
}
