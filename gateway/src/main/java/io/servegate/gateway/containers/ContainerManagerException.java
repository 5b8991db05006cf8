package io.servegate.gateway.containers;

/** A container manager refused a request or its platform failed; {@link #kind()} says which. */
public final class ContainerManagerException extends RuntimeException {

    /** Why: maps to HTTP 404, 409, 400 and 502 on the admin API. */
    public enum Kind { NOT_FOUND, CONFLICT, INVALID, PLATFORM }

    private final Kind kind;

    public ContainerManagerException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public ContainerManagerException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
