package io.servegate.core.scheduling;

import java.util.Objects;

/**
 * The app a query is for, as its model version's scheduler sees it: its tier, and its weight
 * among the apps of that tier. When the version cannot serve everything, higher tiers are served
 * first and the apps of one tier share what is left in proportion to their weights, counted in
 * model time.
 *
 * @param app      the app's name; queries of one name are one tenant
 * @param priority its tier
 * @param weight   its share among the apps of its tier, {@code >= 1}
 */
public record Tenant(String app, Priority priority, int weight) {

    /** Largest weight accepted. */
    public static final int MAX_WEIGHT = 1_000;

    /** What a query submitted without a tenant is for: one anonymous standard app of weight 1. */
    public static final Tenant DEFAULT = new Tenant("", Priority.STANDARD, 1);

    public Tenant {
        Objects.requireNonNull(app, "app");
        Objects.requireNonNull(priority, "priority");
        if (weight < 1 || weight > MAX_WEIGHT) {
            throw new IllegalArgumentException("weight must be in 1.." + MAX_WEIGHT + ", got " + weight);
        }
    }
}
