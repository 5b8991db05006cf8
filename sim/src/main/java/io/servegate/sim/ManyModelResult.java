package io.servegate.sim;

import io.servegate.core.scheduling.RejectReason;
import io.servegate.sim.report.Summary;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The outcome of one many-model run.
 *
 * @param scenario what was run
 * @param stats what became of every query (all models together)
 * @param coldStarts queries that arrived when no replica held their model (with the static
 *                   placement none: its other models never reach a replica)
 * @param loads models loaded
 * @param evictions models unloaded to make room
 * @param loadNanos replica time spent loading
 * @param busyNanos replica time spent loading and serving, all replicas together
 * @param wallNanos wall-clock time the run took
 */
public record ManyModelResult(ManyModelScenario scenario, ModelStats stats, long coldStarts, long loads,
        long evictions, long loadNanos, long busyNanos, long wallNanos) {

    /** Predictions answered in time per second. */
    public double goodputRps() {
        return stats.good() / scenario.durationS();
    }

    /** Queries offered per second. */
    public double offeredRps() {
        return stats.arrived() / scenario.durationS();
    }

    /** Share of the queries that were cold starts. */
    public double coldStartRate() {
        return stats.arrived() == 0 ? 0 : (double) coldStarts / stats.arrived();
    }

    /** The run's numbers, key names stable for tools. */
    public Map<String, Object> summary() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("placement", scenario.placement().id());
        m.put("offered_rps", Summary.round(offeredRps()));
        m.put("goodput_rps", Summary.round(goodputRps()));
        m.put("good_share", Summary.round(stats.arrived() == 0 ? 0 : (double) stats.good() / stats.arrived()));
        m.put("arrived", stats.arrived());
        m.put("good", stats.good());
        m.put("late", stats.late());
        Map<String, Object> defaults = new LinkedHashMap<>();
        for (RejectReason r : RejectReason.values()) {
            defaults.put(r.name().toLowerCase(Locale.ROOT), stats.defaults(r));
        }
        m.put("defaults", defaults);
        m.put("cold_starts", coldStarts);
        m.put("cold_start_rate", Summary.round(coldStartRate()));
        m.put("loads", loads);
        m.put("loads_per_s", Summary.round(loads / scenario.durationS()));
        m.put("evictions", evictions);
        m.put("load_ms_total", Summary.round(loadNanos / 1e6));
        m.put("p50_ms", Summary.round(stats.latencyMs(50)));
        m.put("p99_ms", Summary.round(stats.latencyMs(99)));
        m.put("mean_batch", Summary.round(stats.meanBatchSize()));
        m.put("replica_busy_fraction", Summary.round(busyNanos / (scenario.durationS() * 1e9 * scenario.replicas())));
        m.put("wall_ms", Summary.round(wallNanos / 1e6));
        return m;
    }
}
