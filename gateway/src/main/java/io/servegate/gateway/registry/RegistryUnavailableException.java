package io.servegate.gateway.registry;

/**
 * The registry's backing store (Redis) could not be reached or failed, so a write's outcome is
 * unknown or it was not attempted. Reads keep serving the last snapshot. The message starts with
 * {@code "registry store unreachable: "}; the cause is the store client's exception.
 */
public final class RegistryUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed
     * @param cause   the store client's exception, may be null
     */
    public RegistryUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
