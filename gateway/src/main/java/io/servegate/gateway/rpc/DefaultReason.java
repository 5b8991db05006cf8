package io.servegate.gateway.rpc;

/** Why a query got its app's default output instead of a prediction; a metric tag and an explanation. */
public enum DefaultReason {
    DEADLINE("no prediction arrived within the latency SLO"),
    NO_MODEL("no model is linked to the application"),
    NO_REPLICA("no ready replica serves the model"),
    OVERLOADED("every replica's queue is full"),
    CIRCUIT_OPEN("the replica's circuit breaker is open after repeated failures"),
    CONTAINER_ERROR("the model container failed the batch"),
    LOW_CONFIDENCE("the models' confidence is below the application's threshold"),
    NO_ANSWER("none of the selected models answered within the latency SLO");

    private final String explanation;

    DefaultReason(String explanation) {
        this.explanation = explanation;
    }

    public String explanation() {
        return explanation;
    }

    /** The tag value used in metrics. */
    public String tag() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
