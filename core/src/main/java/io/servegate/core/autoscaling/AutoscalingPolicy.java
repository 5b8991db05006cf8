package io.servegate.core.autoscaling;

import java.util.Locale;

/** How an {@link Autoscaler} decides. */
public enum AutoscalingPolicy {
    /**
     * The capacity model on the latency profile against the traffic envelope (InferLine's tuner):
     * up at once to the replicas the envelope needs, or by Symphony's step when the bad rate
     * passes its threshold; down, after the cooldown and while replicas sit idle, to the replicas
     * the cooldown's busiest rate needs. Falls back to {@link #SIGNALS} until a profile exists.
     */
    ENVELOPE,
    /**
     * Symphony's signals alone (§4.4): up by {@code N·r/(1−r)} when the bad rate {@code r} passes
     * its threshold, down by {@code N·f} when the idle fraction {@code f} stays above its own.
     */
    SIGNALS;

    /** The name used in configuration and the admin API. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** @throws IllegalArgumentException naming the known policies */
    public static AutoscalingPolicy of(String id) {
        for (AutoscalingPolicy p : values()) {
            if (p.id().equalsIgnoreCase(id)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown autoscaling policy '" + id + "'; known are envelope, signals");
    }
}
