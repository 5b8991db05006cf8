package io.servegate.sim.pipeline;

import java.util.Locale;

/** How a pipeline configuration is chosen: InferLine's planner and the two baselines it is compared with. */
public enum PlanStrategy {
    /** InferLine's greedy planner: per stage batch size, replicas and hardware kind. */
    INFERLINE,
    /** Coarse-grained: one batch size and one replica count for every stage, each on its fastest hardware. */
    COARSE_GRAINED,
    /** The greedy planner with every stage's batch size held at 1. */
    BATCH_ONE;

    /** Lower-case name with dashes, as reports print it. */
    public String id() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
