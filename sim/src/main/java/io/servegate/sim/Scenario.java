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
 * @param measureFromNanos the models' tallies count the queries that arrive from then on and the
 *                         batches sent from then on; what comes before runs as a lead-in that
 *                         warms the schedulers (arrival rate, profiles) and is not counted, and
 *                         rates are over the rest of the duration (0: everything counts); the
 *                         replicas' busy time and idle fraction still cover the whole run
 */
public record Scenario(List<ModelSpec> models, Workload workload, long durationNanos, long seed, int profileMax,
        java.util.Map<String, Object> settings, long measureFromNanos) {

    public Scenario {
        models = List.copyOf(models);
        if (models.isEmpty() || durationNanos <= 0 || profileMax < 0) {
            throw new IllegalArgumentException("need a model, a positive duration and profileMax >= 0");
        }
        if (measureFromNanos < 0 || measureFromNanos >= durationNanos) {
            throw new IllegalArgumentException("the measured part must start within the duration");
        }
        settings = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(settings));
    }

    /** A scenario whose whole run is counted. */
    public Scenario(List<ModelSpec> models, Workload workload, long durationNanos, long seed, int profileMax,
            java.util.Map<String, Object> settings) {
        this(models, workload, durationNanos, seed, profileMax, settings, 0);
    }
}
