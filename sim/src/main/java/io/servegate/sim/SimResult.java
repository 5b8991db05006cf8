package io.servegate.sim;

import java.util.List;

/**
 * The outcome of one run.
 *
 * @param scenario what was run
 * @param models per model, in the scenario's order
 * @param replicas per replica, with its busy time and life span
 * @param endNanos virtual time of the last event
 * @param events events fired
 * @param wallNanos wall-clock time the run took
 * @param cpuNanos CPU time of the simulating thread (immune to other processes on the cores)
 */
public record SimResult(Scenario scenario, List<ModelResult> models, List<ReplicaResult> replicas, long endNanos,
        long events, long wallNanos, long cpuNanos) {

    /** One model's spec and tallies. */
    public record ModelResult(ModelSpec spec, ModelStats stats) {
    }

    /**
     * One replica's use: container time on completed batches against its life (from joining to
     * dying or to the end of the run, whichever is later of the run's duration and its last event).
     */
    public record ReplicaResult(String id, String model, int concurrency, long busyNanos, long lifeNanos,
            boolean died) {

        /** Share of its life its slots spent idle, in [0, 1]. */
        public double idleFraction() {
            return lifeNanos <= 0 ? 1 : Math.max(0, 1 - (double) busyNanos / ((double) lifeNanos * concurrency));
        }
    }

    /** Every model's tallies together. */
    public ModelStats total() {
        ModelStats t = new ModelStats();
        models.forEach(m -> t.add(m.stats()));
        return t;
    }

    /** The span rates are over, in seconds: the duration less the lead-in ({@link Scenario#measureFromNanos}). */
    public double seconds() {
        return (scenario.durationNanos() - scenario.measureFromNanos()) / 1e9;
    }

    /** Queries offered per second. */
    public double offeredRps() {
        return total().arrived() / seconds();
    }

    /** Predictions answered in time per second. */
    public double goodputRps() {
        return total().good() / seconds();
    }

    /** Mean idle fraction over the replicas. */
    public double meanIdleFraction() {
        return replicas.stream().mapToDouble(ReplicaResult::idleFraction).average().orElse(Double.NaN);
    }

    /** Simulated queries per CPU second of the simulating thread. */
    public double queriesPerCpuSecond() {
        return total().arrived() / (cpuNanos / 1e9);
    }

    /** Simulated queries per second of wall time. */
    public double queriesPerWallSecond() {
        return total().arrived() / (wallNanos / 1e9);
    }
}
