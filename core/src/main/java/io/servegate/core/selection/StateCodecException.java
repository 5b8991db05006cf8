package io.servegate.core.selection;

/**
 * Stored selection state that cannot be decoded: unknown schema version, another policy's
 * state, or corrupt bytes. A caller may log it and start over from
 * {@link SelectionPolicy#init}.
 */
public final class StateCodecException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    /** @param message what is wrong with the bytes */
    public StateCodecException(String message) {
        super(message);
    }

    /**
     * @param message what is wrong with the bytes
     * @param cause   the underlying failure
     */
    public StateCodecException(String message, Throwable cause) {
        super(message, cause);
    }
}
