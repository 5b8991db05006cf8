package io.servegate.gateway.dispatch;

import java.util.concurrent.CompletionException;

/** A query that the dispatch layer will not get a prediction for, and why. */
public final class DispatchException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final DispatchFailure failure;
    private final String detail;

    /** @param detail what failed, for the answer's explanation (a model, a replica, the container's error) */
    public DispatchException(DispatchFailure failure, String detail) {
        super(failure.name() + ": " + detail, null, false, false);
        this.failure = failure;
        this.detail = detail;
    }

    public DispatchFailure failure() {
        return failure;
    }

    public String detail() {
        return detail;
    }

    /** What a future of the dispatch layer failed with: {@code error}, or the cause a {@link CompletionException} wraps. */
    public static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }
}
