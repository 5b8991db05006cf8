package io.servegate.gateway.containers;

import java.util.Locale;

/** When a manager restarts a replica whose container stopped on its own (Docker's policy names). */
public enum RestartPolicy {
    /** Restart whatever the exit status. */
    ALWAYS,
    /** Restart only after a failure: a non-zero exit status or a failed liveness check. */
    ON_FAILURE,
    /** Never restart; the replica stays {@code STOPPED}. */
    NEVER;

    /** @return the policy named {@code always}, {@code on-failure} or {@code never} */
    public static RestartPolicy parse(String name) {
        for (RestartPolicy p : values()) {
            if (p.configName().equals(name)) {
                return p;
            }
        }
        throw new IllegalArgumentException("restart policy must be 'always', 'on-failure' or 'never', got '"
                + name + "'");
    }

    /** @return whether a container that stopped, {@code failed} or not, is restarted */
    public boolean restarts(boolean failed) {
        return this == ALWAYS || (this == ON_FAILURE && failed);
    }

    /** @return the name in configuration: {@code always}, {@code on-failure}, {@code never} */
    public String configName() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
