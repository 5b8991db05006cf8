package io.servegate.gateway.api;

import org.springframework.http.HttpStatus;

/**
 * A request the gateway refuses, rendered as {@code {"error": ..., "cause": ...}} with a 4xx
 * (or 503) status: {@code error} says what kind of problem, {@code cause} names it exactly.
 */
public final class ApiException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final HttpStatus status;
    private final String error;

    public ApiException(HttpStatus status, String error, String cause) {
        super(cause, null, false, false);
        this.status = status;
        this.error = error;
    }

    public static ApiException badRequest(String cause) {
        return new ApiException(HttpStatus.BAD_REQUEST, "bad request", cause);
    }

    public static ApiException notFound(String cause) {
        return new ApiException(HttpStatus.NOT_FOUND, "not found", cause);
    }

    public HttpStatus status() {
        return status;
    }

    public String error() {
        return error;
    }
}
