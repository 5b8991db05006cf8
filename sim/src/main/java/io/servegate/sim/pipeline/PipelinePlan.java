package io.servegate.sim.pipeline;

import io.servegate.sim.latency.ModelProfiles;

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

    /**
     * Each stage's latency budget for a gateway pipeline ({@code stages[].deadline_micros}): its
     * estimated p99 latency (its service time at batch size 1 where no query reached it), all
     * scaled so that the longest path's budgets add up to the SLO, rounded down to microseconds.
     */
    public long[] stageBudgetsMicros(PipelineSpec spec, ModelProfiles profiles) {
        int n = spec.stages().size();
        double[] p99 = new double[n];
        for (int i = 0; i < n; i++) {
            double measured = estimate.stages().get(i).p99Ms();
            p99[i] = Double.isNaN(measured)
                    ? profiles.latency(spec.stages().get(i).model(), config.stage(i).hardware()).meanNanos(1) / 1e6
                    : measured;
        }
        double scale = spec.sloMs() / spec.longestPath(i -> p99[i]);
        long[] micros = new long[n];
        for (int i = 0; i < n; i++) {
            micros[i] = (long) Math.floor(p99[i] * scale * 1000);
        }
        return micros;
    }
}
