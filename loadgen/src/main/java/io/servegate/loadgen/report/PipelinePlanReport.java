package io.servegate.loadgen.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The {@code pipeline-plan} scenario's results: {@code pipeline-plan.json} (every number) and
 * {@code pipeline-plan.md}, a table of each plan's simulated and live latency, attainment and
 * defaults beside its cost.
 */
public final class PipelinePlanReport {

    private static final String SCENARIO = "pipeline-plan";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private PipelinePlanReport() {
    }

    /** Writes both files into {@code dir}; returns the markdown. */
    public static String write(Path dir, Map<String, Object> settings, Map<String, Object> minimum,
            List<Map<String, Object>> runs, Map<String, Object> gatewayInfo, Map<String, Object> environment,
            RunConditions atStart, Instant startedAt) throws IOException {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("scenario", SCENARIO);
        json.put("started_at", startedAt.toString());
        json.put("settings", settings);
        json.put("minimum_latency", minimum);
        json.put("runs", runs);
        json.put("gateway", gatewayInfo);
        json.put("environment", environment);
        JSON.writeValue(dir.resolve(SCENARIO + ".json").toFile(), json);
        StringBuilder md = new StringBuilder();
        md.append("# Pipeline plans live\n\n").append(String.format(Locale.ROOT,
                "%s, load average %s at start, %s at end. Minimum latency (median of %s queries one at a time, "
                        + "fastest kinds, batch 1): %s ms (emulated compute %s ms).%n%n", startedAt,
                atStart.loadAverage(), RunConditions.now().loadAverage(), minimum.get("queries"),
                minimum.get("median_ms"), minimum.get("emulated_compute_ms")));
        if (!runs.isEmpty()) {
            md.append(String.format(Locale.ROOT, "SLO %s ms, planned with %s ms of overhead per stage, Poisson %.0f/s, "
                    + "%s policy, stage deadlines: %s, %.0f s per plan after %.0f s warm-up.%n%n", settings.get("slo_ms"),
                    settings.get("plan_overhead_ms"), settings.get("rate"), settings.get("policy"),
                    settings.get("stage_deadlines"), settings.get("duration_s"), settings.get("warmup_s")));
            md.append("| plan | cost / h | per stage: kind × replicas, max batch (live mean batch) | sim p99 ms | "
                    + "sim attainment | live p99 ms | live attainment | defaults (by stage) | load average |\n");
            md.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
            for (Map<String, Object> r : runs) {
                StringBuilder st = new StringBuilder();
                Map<?, ?> batches = (Map<?, ?>) r.get("stage_batches");
                for (Object o : (List<?>) r.get("stages")) {
                    Map<?, ?> s = (Map<?, ?>) o;
                    Object mean = ((Map<?, ?>) batches.get(s.get("stage"))).get("mean_batch");
                    st.append(st.isEmpty() ? "" : "; ").append(s.get("stage")).append(' ').append(s.get("hardware"))
                            .append(" × ").append(s.get("replicas")).append(", ").append(s.get("max_batch"))
                            .append(" (").append(mean).append(')');
                }
                Map<?, ?> cond = (Map<?, ?>) r.get("conditions");
                md.append(String.format(Locale.ROOT, "| %s | %.2f | %s | %s | %.1f %% | %s | %.1f %% | %s %s | %s |%n",
                        r.get("strategy"), r.get("cost_per_hour"), st, r.get("sim_fresh_p99_ms"),
                        100 * ((Number) r.get("sim_fresh_attainment")).doubleValue(), r.get("p99_ms"),
                        100 * ((Number) r.get("attainment")).doubleValue(), r.get("defaults"),
                        r.get("defaults_by_stage"), cond.get("loadAverageAtEnd")));
            }
        }
        Files.writeString(dir.resolve(SCENARIO + ".md"), md.toString());
        return md.toString();
    }
}
