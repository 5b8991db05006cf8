package io.servegate.gateway.query;

/**
 * A query of an app configured with {@code overload_response: reject} that found its model's
 * queue full: the API answers 503 with {@code Retry-After} instead of the default output.
 */
public final class OverloadRejectedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public OverloadRejectedException(String app, String detail) {
        // no stack trace: under overload this is thrown thousands of times a second
        super("app '" + app + "' is overloaded: " + detail, null, false, false);
    }
}
