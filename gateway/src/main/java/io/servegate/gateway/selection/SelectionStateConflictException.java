package io.servegate.gateway.selection;

/**
 * {@link SelectionStateStore#update} gave up: every attempt lost its compare-and-set to a
 * concurrent writer. Nothing was written by the failed update.
 */
public final class SelectionStateConflictException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** @param message which state, and after how many attempts */
    public SelectionStateConflictException(String message) {
        super(message);
    }
}
