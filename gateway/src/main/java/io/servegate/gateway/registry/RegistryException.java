package io.servegate.gateway.registry;

import java.util.Objects;

/**
 * A registry write was refused: the thing does not exist, already exists, or is not valid.
 * The API layer maps {@link Kind} to an HTTP status (404, 409, 400).
 */
public final class RegistryException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Why a write was refused. */
    public enum Kind {
        /** An app, model or model version that the write names does not exist. */
        NOT_FOUND,
        /** The app or model version to add already exists. */
        CONFLICT,
        /** The request is malformed or inconsistent (bad name, input-type mismatch, ...). */
        INVALID
    }

    private final Kind kind;

    /**
     * @param kind    why the write was refused
     * @param message a human-readable explanation naming the offending thing
     */
    public RegistryException(Kind kind, String message) {
        super(message);
        this.kind = Objects.requireNonNull(kind, "kind");
    }

    /** @return why the write was refused */
    public Kind kind() {
        return kind;
    }

    public static RegistryException notFound(String message) {
        return new RegistryException(Kind.NOT_FOUND, message);
    }

    public static RegistryException conflict(String message) {
        return new RegistryException(Kind.CONFLICT, message);
    }

    public static RegistryException invalid(String message) {
        return new RegistryException(Kind.INVALID, message);
    }
}
