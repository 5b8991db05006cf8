package io.servegate.core.selection;

import java.util.Arrays;

/**
 * A stored selection state and its version, as read from a selection state store (the gateway's {@code SelectionStateStore}).
 *
 * <p>Immutable: the array is copied in and out.
 *
 * @param state   the encoded state
 * @param version the version to pass to the state store's {@code compareAndSet}; {@code > 0}
 */
public record Versioned(byte[] state, long version) {

    /**
     * @throws IllegalArgumentException if {@code state} is null or {@code version <= 0}
     */
    public Versioned {
        if (state == null) {
            throw new IllegalArgumentException("state must not be null");
        }
        if (version <= 0) {
            throw new IllegalArgumentException("version must be > 0, got " + version);
        }
        state = state.clone();
    }

    /** A copy of the encoded state. */
    @Override
    public byte[] state() {
        return state.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Versioned v && version == v.version && Arrays.equals(state, v.state);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(state) * 31 + Long.hashCode(version);
    }

    @Override
    public String toString() {
        return "Versioned[version=" + version + ", " + state.length + " bytes]";
    }
}
