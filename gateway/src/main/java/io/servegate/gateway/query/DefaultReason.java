package io.servegate.gateway.query;

import io.servegate.gateway.dispatch.DispatchFailure;

/** Why a query got its app's default output instead of a prediction; a metric tag and an explanation. */
public enum DefaultReason {
    DEADLINE("no prediction arrived within the latency SLO"),
    INFEASIBLE("the scheduler predicted that no batch could answer it within the latency SLO"),
    NO_MODEL("no model is linked to the application"),
    NO_REPLICA("no ready replica serves the model"),
    OVERLOADED("the model's queue is full or the gateway is overloaded"),
    SHED("the model is over capacity and serves higher-priority apps or other apps' fair shares first"),
    CIRCUIT_OPEN("the replica's circuit breaker is open after repeated failures"),
    CONTAINER_ERROR("the model container failed the batch"),
    /** Not answered with the default where an API can say so: the client's input is at fault (400). */
    INPUT_REJECTED("the model container rejected the input"),
    LOW_CONFIDENCE("the models' confidence is below the application's threshold"),
    NO_ANSWER("none of the selected models answered within the latency SLO"),
    FORWARD_FAILED("the gateway that schedules the model could not be reached");

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

    /** The reason a query the dispatch layer failed is answered with. */
    static DefaultReason of(DispatchFailure failure) {
        return switch (failure) {
            case DEADLINE -> DEADLINE;
            case INFEASIBLE -> INFEASIBLE;
            case OVERLOADED -> OVERLOADED;
            case SHED -> SHED;
            case NO_REPLICA -> NO_REPLICA;
            case CIRCUIT_OPEN -> CIRCUIT_OPEN;
            case CONTAINER_ERROR -> CONTAINER_ERROR;
            case INPUT_REJECTED -> INPUT_REJECTED;
            case FORWARD_FAILED, MOVED -> FORWARD_FAILED;
        };
    }
}
