package io.servegate.core.autoscaling;

import java.util.Locale;

/** Why an {@link Autoscaler} changed the number of replicas. */
public enum ScalingReason {
    /** Below {@code min_replicas}. */
    MIN_REPLICAS,
    /** Above {@code max_replicas}. */
    MAX_REPLICAS,
    /** The traffic envelope exceeds what the replicas were planned for. */
    ENVELOPE,
    /** Too many queries answered late or with a default. */
    BAD_RATE,
    /** The replicas sat idle through the cooldown, and fewer carry the recent load. */
    IDLE;

    /** The name used in metrics and the admin API. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }
}
