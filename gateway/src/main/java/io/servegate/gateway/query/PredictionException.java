package io.servegate.gateway.query;

/** A query that will not get a prediction, and why; the query layer turns it into the default output. */
public final class PredictionException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final DefaultReason reason;

    public PredictionException(DefaultReason reason, String detail) {
        super(detail == null ? reason.explanation() : reason.explanation() + ": " + detail, null, false, false);
        this.reason = reason;
    }

    public DefaultReason reason() {
        return reason;
    }
}
