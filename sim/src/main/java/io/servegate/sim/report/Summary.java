package io.servegate.sim.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.servegate.core.scheduling.RejectReason;
import io.servegate.sim.ModelStats;
import io.servegate.sim.SimResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The JSON summary of a run: rates over the scenario's duration, what became of the queries,
 * latency of the answered predictions, batch sizes, replica idle fractions, and the simulator's
 * own speed. Key names are stable; tools read them.
 */
public final class Summary {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private Summary() {
    }

    /** The summary of {@code result} as an ordered map. */
    public static Map<String, Object> of(SimResult result) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("settings", result.scenario().settings());
        m.putAll(stats(result.total(), result.seconds()));
        List<SimResult.ReplicaResult> rs = result.replicas();
        m.put("replica_idle_fraction", round(result.meanIdleFraction()));
        m.put("replica_idle_fraction_min", round(rs.stream().mapToDouble(SimResult.ReplicaResult::idleFraction)
                .min().orElse(Double.NaN)));
        m.put("replica_idle_fraction_max", round(rs.stream().mapToDouble(SimResult.ReplicaResult::idleFraction)
                .max().orElse(Double.NaN)));
        m.put("replicas_died", rs.stream().filter(SimResult.ReplicaResult::died).count());
        if (result.models().size() > 1) {
            List<Map<String, Object>> models = result.models().stream().map(mr -> {
                Map<String, Object> x = new LinkedHashMap<>();
                x.put("model", mr.spec().name());
                x.put("slo_ms", mr.spec().config().sloNanos() / 1e6);
                x.put("replicas", mr.spec().replicas().size());
                x.putAll(stats(mr.stats(), result.seconds()));
                return x;
            }).toList();
            m.put("models", models);
        }
        Map<String, Object> speed = new LinkedHashMap<>();
        speed.put("simulated_s", round(result.endNanos() / 1e9));
        speed.put("wall_ms", round(result.wallNanos() / 1e6));
        speed.put("events", result.events());
        speed.put("cpu_ms", round(result.cpuNanos() / 1e6));
        speed.put("queries_per_wall_s", Math.round(result.queriesPerWallSecond()));
        speed.put("queries_per_cpu_s", Math.round(result.queriesPerCpuSecond()));
        speed.put("events_per_wall_s", Math.round(result.events() / (result.wallNanos() / 1e9)));
        m.put("sim", speed);
        return m;
    }

    private static Map<String, Object> stats(ModelStats s, double seconds) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("offered_rps", round(s.arrived() / seconds));
        m.put("goodput_rps", round(s.good() / seconds));
        m.put("arrived", s.arrived());
        m.put("answered", s.good() + s.late());
        m.put("good", s.good());
        m.put("late", s.late());
        Map<String, Object> defaults = new LinkedHashMap<>();
        for (RejectReason r : RejectReason.values()) {
            defaults.put(r.name().toLowerCase(Locale.ROOT), s.defaults(r));
        }
        defaults.put("failed", s.failed());
        m.put("defaults", defaults);
        m.put("p50_ms", round(s.latencyMs(50)));
        m.put("p99_ms", round(s.latencyMs(99)));
        m.put("batches", s.batches());
        m.put("mean_batch", round(s.meanBatchSize()));
        Map<String, Long> sizes = new LinkedHashMap<>();
        long[] counts = s.batchSizes();
        for (int i = 1; i < counts.length; i++) {
            if (counts[i] > 0) {
                sizes.put(String.valueOf(i), counts[i]);
            }
        }
        m.put("batch_sizes", sizes);
        return m;
    }

    /** Writes {@code summary} as JSON to {@code file}, creating its folder. */
    public static void write(Object summary, Path file) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        if (dir != null) {
            Files.createDirectories(dir);
        }
        JSON.writeValue(file.toFile(), summary);
    }

    /** One line for the terminal. */
    public static String line(SimResult r) {
        ModelStats t = r.total();
        return String.format(Locale.ROOT,
                "offered %.1f/s  goodput %.1f/s  late %d  defaults %d  failed %d  p50 %.2f ms  p99 %.2f ms  "
                        + "mean batch %.2f  idle %.3f  (%,d queries in %.0f ms wall, %.0f ms CPU: %,.0f/CPU-s)",
                r.offeredRps(), r.goodputRps(), t.late(), totalDefaults(t), t.failed(), t.latencyMs(50),
                t.latencyMs(99), t.meanBatchSize(), r.meanIdleFraction(), t.arrived(), r.wallNanos() / 1e6,
                r.cpuNanos() / 1e6, r.queriesPerCpuSecond());
    }

    public static long totalDefaults(ModelStats t) {
        long d = 0;
        for (RejectReason r : RejectReason.values()) {
            d += t.defaults(r);
        }
        return d;
    }

    public static Object round(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return null;
        }
        return Math.round(v * 1000) / 1000.0;
    }
}
