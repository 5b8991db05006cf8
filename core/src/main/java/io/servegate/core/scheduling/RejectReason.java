package io.servegate.core.scheduling;

/** Why a scheduler answered a query with its default instead of sending it to a replica. */
public enum RejectReason {
    /** Its deadline passed while it waited. */
    DEADLINE,
    /** The latency profile says no batch could answer it before its deadline (Clockwork's early rejection, Symphony's pruning). */
    INFEASIBLE,
    /** The model's queue was full when it arrived. */
    OVERLOADED,
    /** No replica of the model is available to serve it. */
    NO_REPLICA,
    /**
     * Its app's tier is below another's, and the model, over capacity, could not answer it in
     * time after serving the higher tiers (or its tier's fair share): answered at once, not late.
     */
    SHED,
    /**
     * Its model version was handed to another scheduler (a fleet member that takes it over)
     * before its batch was sent: the caller routes it there ({@link ModelScheduler#handOver}).
     */
    MOVED
}
