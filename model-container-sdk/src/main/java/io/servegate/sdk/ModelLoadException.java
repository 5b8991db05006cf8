package io.servegate.sdk;

import java.util.Objects;

/** A model could not be loaded; {@link #reason()} decides the gRPC status its callers get. */
public final class ModelLoadException extends Exception {

    /** Why a load failed. */
    public enum Reason {
        /** The repository has no such model (or its file is gone): NOT_FOUND. */
        NOT_FOUND,
        /** The model's file exists but cannot be loaded (corrupt, wrong interface): INVALID_ARGUMENT. */
        INVALID_MODEL,
        /** The model does not fit the memory budget even with every evictable model unloaded: RESOURCE_EXHAUSTED. */
        TOO_LARGE
    }

    private final Reason reason;

    public ModelLoadException(Reason reason, String message) {
        super(message);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    public ModelLoadException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    public Reason reason() {
        return reason;
    }
}
