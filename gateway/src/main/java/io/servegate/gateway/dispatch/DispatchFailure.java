package io.servegate.gateway.dispatch;

import io.servegate.core.scheduling.RejectReason;
import java.util.Locale;

/** Why the dispatch layer gives a query no prediction; the query layer answers it with its app's default. */
public enum DispatchFailure {
    /** The scheduler's: its deadline passed while it waited. */
    DEADLINE,
    /** The scheduler's: no batch could answer it before its deadline. */
    INFEASIBLE,
    /** The scheduler's: the model's queue was full. */
    OVERLOADED,
    /** No ready replica serves the model version (or the one its batch went to was removed). */
    NO_REPLICA,
    /** The replica's circuit breaker is open. */
    CIRCUIT_OPEN,
    /** The container failed the call. */
    CONTAINER_ERROR,
    /** The container rejected the query's input (a per-row error, or INVALID_ARGUMENT for it alone): the client's error. */
    INPUT_REJECTED,
    /** The scheduler's: the model is over capacity and serves higher tiers (or its tier's fair shares) first. */
    SHED,
    /** The gateway that schedules the model version (in a fleet) could not be reached, or none owns it. */
    FORWARD_FAILED,
    /**
     * The scheduler's: this gateway handed the model version to another fleet member before the
     * query's batch was sent; the fleet's dispatcher routes it to that member.
     */
    MOVED;

    /** The failure a scheduler's rejection is reported with. */
    public static DispatchFailure of(RejectReason reason) {
        return switch (reason) {
            case DEADLINE -> DEADLINE;
            case INFEASIBLE -> INFEASIBLE;
            case OVERLOADED -> OVERLOADED;
            case NO_REPLICA -> NO_REPLICA;
            case SHED -> SHED;
            case MOVED -> MOVED;
        };
    }

    /** The tag value used in metrics. */
    public String tag() {
        return name().toLowerCase(Locale.ROOT);
    }
}
