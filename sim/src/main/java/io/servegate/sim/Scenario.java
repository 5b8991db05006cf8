package io.servegate.sim;

import io.servegate.sim.workload.Workload;
import java.util.List;

/**
 * Everything a run needs; the same scenario and seed give the same result.
 *
 * @param models the models, indexed as the workload's arrivals name them
 * @param workload what arrives
 * @param durationNanos the span that rates are measured over (arrivals normally stop at its end;
 *                      the run continues until every query has left)
 * @param seed the random seed
 * @param profileMax the profiling pass at registration measures batch sizes 1, 2, 4, … up to this
 *                   (0: none; the scheduler then starts cold)
 * @param settings what the run was asked for, as the reports print it
 */
public record Scenario(List<ModelSpec> models, Workload workload, long durationNanos, long seed, int profileMax,
        java.util.Map<String, Object> settings) {

    public Scenario {
        models = List.copyOf(models);
        if (models.isEmpty() || durationNanos <= 0 || profileMax < 0) {
            throw new IllegalArgumentException("need a model, a positive duration and profileMax >= 0");
        }
        settings = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(settings));
    }
}
