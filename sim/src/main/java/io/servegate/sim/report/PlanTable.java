package io.servegate.sim.report;

import io.servegate.sim.latency.ModelProfiles;
import io.servegate.sim.pipeline.PipelineEstimate;
import io.servegate.sim.pipeline.PipelinePlan;
import io.servegate.sim.pipeline.PipelineSpec;
import io.servegate.sim.pipeline.StageConfig;
import io.servegate.workload.report.Charts;
import io.servegate.workload.report.HtmlReport;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** How {@code bin/sim plan} shows a plan: a table for the terminal, a JSON object, and an HTML page of all plans. */
public final class PlanTable {

    private PlanTable() {
    }

    /** The plan as a readable table: the totals, then one line per stage. */
    public static String text(PipelineSpec spec, ModelProfiles profiles, PipelinePlan p, PipelineEstimate fresh, double seconds) {
        StringBuilder b = new StringBuilder();
        PipelineEstimate e = p.estimate();
        b.append(String.format(Locale.ROOT,
                "%n%s: cost %.3f/h; sample trace p99 %.2f ms, attainment %.4f; fresh trace p99 %.2f ms, attainment %.4f"
                        + " (%d configurations estimated in %.1f s)%n",
                p.strategy().id(), p.costPerHour(), e.p99Ms(), e.attainment(), fresh.p99Ms(), fresh.attainment(),
                p.estimates(), seconds));
        b.append(String.format(Locale.ROOT, "  %-14s %-14s %-10s %8s %9s %10s %7s %6s %8s %10s%n", "stage", "model",
                "hardware", "replicas", "max batch", "mean batch", "scale", "busy", "p99 ms", "budget ms"));
        long[] budgets = p.stageBudgetsMicros(spec, profiles);
        for (int i = 0; i < spec.stages().size(); i++) {
            StageConfig c = p.config().stage(i);
            PipelineEstimate.StageEstimate s = e.stages().get(i);
            b.append(String.format(Locale.ROOT, "  %-14s %-14s %-10s %8d %9d %10.2f %7.3f %6.3f %8.2f %10.3f%n",
                    spec.stages().get(i).name(), spec.stages().get(i).model(), c.hardware(), c.replicas(), c.maxBatch(),
                    s.meanBatch(), s.scaleFactor(), s.utilisation(), s.p99Ms(), budgets[i] / 1000.0));
        }
        return b.toString();
    }

    /** The plan as JSON: totals, both estimates, and each stage's configuration and latency budget. */
    public static Map<String, Object> json(PipelineSpec spec, ModelProfiles profiles, PipelinePlan p, PipelineEstimate fresh,
            double seconds) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("strategy", p.strategy().id());
        m.put("feasible", true);
        m.put("cost_per_hour", Summary.round(p.costPerHour()));
        m.put("sample", estimate(p.estimate()));
        m.put("fresh", estimate(fresh));
        m.put("configurations_estimated", p.estimates());
        m.put("planning_s", Summary.round(seconds));
        List<Map<String, Object>> stages = new ArrayList<>();
        long[] budgets = p.stageBudgetsMicros(spec, profiles);
        for (int i = 0; i < spec.stages().size(); i++) {
            StageConfig c = p.config().stage(i);
            PipelineEstimate.StageEstimate s = p.estimate().stages().get(i);
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("stage", spec.stages().get(i).name());
            x.put("model", spec.stages().get(i).model());
            x.put("hardware", c.hardware());
            x.put("replicas", c.replicas());
            x.put("max_batch", c.maxBatch());
            x.put("mean_batch", Summary.round(s.meanBatch()));
            x.put("scale_factor", Summary.round(s.scaleFactor()));
            x.put("utilisation", Summary.round(s.utilisation()));
            x.put("p99_ms", Summary.round(s.p99Ms()));
            x.put("deadline_micros", budgets[i]);
            stages.add(x);
        }
        m.put("stages", stages);
        return m;
    }

    private static Map<String, Object> estimate(PipelineEstimate e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("queries", e.arrived());
        m.put("p50_ms", Summary.round(e.p50Ms()));
        m.put("p99_ms", Summary.round(e.p99Ms()));
        m.put("max_ms", Summary.round(e.maxMs()));
        m.put("attainment", Summary.round(e.attainment()));
        m.put("failed", e.failed());
        return m;
    }

    /** {@code plan.html} in {@code dir}: every plan's cost and attainment, a cost chart, and the stages. */
    public static void page(Path dir, Map<String, Object> summary, List<Map<String, Object>> plans) throws IOException {
        List<List<Object>> rows = new ArrayList<>();
        List<String> names = new ArrayList<>();
        List<Double> cost = new ArrayList<>();
        HtmlReport page = new HtmlReport("Pipeline plan: " + summary.get("pipeline"), "InferLine's planner on the simulator: "
                + "per stage batch size, replicas and hardware kind, the cheapest whose estimated p99 on the sample trace "
                + "is within the SLO; each plan is checked on a fresh trace.");
        for (Map<String, Object> p : plans) {
            if (!Boolean.TRUE.equals(p.get("feasible"))) {
                rows.add(Arrays.asList(p.get("strategy"), "infeasible", null, null, null, null));
                continue;
            }
            Map<?, ?> sample = (Map<?, ?>) p.get("sample");
            Map<?, ?> fresh = (Map<?, ?>) p.get("fresh");
            rows.add(List.of(p.get("strategy"), p.get("cost_per_hour"), sample.get("p99_ms"), sample.get("attainment"),
                    fresh.get("p99_ms"), fresh.get("attainment")));
            names.add((String) p.get("strategy"));
            cost.add(((Number) p.get("cost_per_hour")).doubleValue());
        }
        page.table(List.of("strategy", "cost per hour", "sample p99 ms", "sample attainment", "fresh p99 ms",
                "fresh attainment"), rows);
        if (!names.isEmpty()) {
            Path png = Charts.bars(dir.resolve("plan.png"), "Cost per hour of each plan", "cost per hour", names, cost);
            page.image(png, "cost per plan");
        }
        for (Map<String, Object> p : plans) {
            if (p.get("stages") instanceof List<?> stages) {
                page.heading((String) p.get("strategy"));
                List<List<Object>> st = new ArrayList<>();
                for (Object o : stages) {
                    st.add(new ArrayList<>(((Map<?, ?>) o).values()));
                }
                page.table(List.of("stage", "model", "hardware", "replicas", "max batch", "mean batch", "scale factor",
                        "utilisation", "stage p99 ms", "deadline µs"), st);
            }
        }
        page.heading("Settings").keyValues((Map<?, ?>) summary.get("settings"));
        page.heading("Run conditions").keyValues(Environment.now());
        page.link(dir.resolve("plan.json"), "all numbers (JSON)");
        page.write(dir.resolve("plan.html"));
    }
}
