package io.servegate.gateway.query;

/**
 * A query whose input the model container rejected (a per-row error, or INVALID_ARGUMENT for the
 * query alone): the client's error, answered 400 with the container's (bounded) message instead
 * of the app's default. Other queries of its batch got their predictions.
 */
public final class InputRejectedException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    public InputRejectedException(String message) {
        super(message);
    }
}
