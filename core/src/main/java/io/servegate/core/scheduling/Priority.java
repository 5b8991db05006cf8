package io.servegate.core.scheduling;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * An app's tier among the apps that share a model version. When the version cannot serve
 * everything, a higher tier is served first; below capacity the tiers make no difference.
 * Declared highest first: {@link #ordinal()} 0 is served first.
 */
public enum Priority {
    /** Served before every other tier; never shed to make room. */
    CRITICAL,
    /** The default. */
    STANDARD,
    /** Served with what the others leave; shed at once (never answered late) when that is not enough. */
    SHEDDABLE;

    /** The name used in the admin API and the registries. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The tier named {@code name} ({@code critical}, {@code standard}, {@code sheddable}; any case).
     *
     * @throws IllegalArgumentException naming the tiers, for any other name
     */
    public static Priority parse(String name) {
        for (Priority p : values()) {
            if (p.wireName().equalsIgnoreCase(name)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown priority '" + name + "': expected one of "
                + Arrays.stream(values()).map(Priority::wireName).collect(Collectors.joining(", ")));
    }
}
