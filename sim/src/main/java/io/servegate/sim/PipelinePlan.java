package io.servegate.sim;

/**
 * A configuration a planner chose, with what the estimator made of it on the sample trace.
 *
 * @param strategy how it was chosen
 * @param config the configuration
 * @param costPerHour what it costs per hour
 * @param estimate its estimate on the sample trace
 * @param estimates configurations the planner estimated to find it
 */
public record PipelinePlan(PlanStrategy strategy, PipelineConfig config, double costPerHour,
        PipelineEstimate estimate, int estimates) {
}
