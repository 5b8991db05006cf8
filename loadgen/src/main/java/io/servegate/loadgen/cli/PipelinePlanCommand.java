package io.servegate.loadgen.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.servegate.loadgen.harness.GatewayMetrics;
import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.harness.PrometheusText;
import io.servegate.loadgen.load.GatewayAnswer;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.loadgen.load.RandomInputs;
import io.servegate.loadgen.report.PipelinePlanReport;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.workload.admin.GatewayAdminClient;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The simulator's pipeline plans live: a pipeline of emulated models (a batch of b sleeps
 * β + α·b ms, β and α from the per-model profile of the stage's hardware kind) deployed through
 * the gateway's process manager with the replica counts of each plan in {@code bin/sim plan}'s
 * JSON, added as a pipeline app with the plan's per-stage {@code deadline_micros}, and driven by
 * open-loop Poisson arrivals at the planned rate. First it measures the pipeline's minimum
 * latency: one query at a time, every stage on its fastest kind with one replica. Each plan runs
 * alone: its replicas are stopped before the next plan's start. Reported, never asserted.
 */
@Command(name = "pipeline-plan", mixinStandardHelpOptions = true,
        description = "Pipeline plans (bin/sim plan --json) live: emulated stages deployed per plan, Poisson load; "
                + "end-to-end p99 and SLO attainment per plan, and the pipeline's minimum latency.")
public final class PipelinePlanCommand implements Callable<Integer> {

    static final String SCENARIO = "pipeline-plan";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    /** Unmeasured one-at-a-time queries before the minimum latency's: the gateway's code paths warm up. */
    private static final int WARMUP_QUERIES = 200;
    private static final Pattern STAGE = Pattern.compile("stage '([^']+)'");

    @Spec
    CommandSpec spec;

    @Mixin
    GatewayOptions gatewayOptions;

    @Option(names = "--pipeline", required = true, description = "The pipeline file (bin/sim plan's): stages and edges.")
    Path pipelineFile;

    @Option(names = "--profiles", required = true, split = ",",
            description = "Per-model profile files with beta_ms/alpha_ms per hardware kind (bin/sim plan's).")
    List<Path> profileFiles;

    @Option(names = "--plan", description = "bin/sim plan's --json output; without it only the minimum latency is measured.")
    Path planFile;

    @Option(names = "--strategies", split = ",", defaultValue = "inferline,coarse-grained,batch-one",
            description = "The plans to run, in order (default ${DEFAULT-VALUE}).")
    List<String> strategies;

    @Option(names = "--policy", defaultValue = "clipper",
            description = "Stage schedulers: clipper (a fixed batch size = the plan's max batch: the estimator's queue) "
                    + "or symphony/clockwork (their own batch sizes under the gateway's global cap). "
                    + "Default ${DEFAULT-VALUE}.")
    String policy;

    /** Where the stages' deadlines come from. */
    enum StageDeadlines { plan, split }

    @Option(names = "--stage-deadlines", defaultValue = "plan",
            description = "plan: each stage's deadline_micros from the plan; split: none, the gateway splits the SLO by "
                    + "the stages' profiles (a control). Default ${DEFAULT-VALUE}.")
    StageDeadlines stageDeadlines;

    @Mixin
    RateOption rate = new RateOption();

    @Mixin
    DurationOption duration = new DurationOption(60);

    @Mixin
    WarmupOption warmup = new WarmupOption(15);

    @Option(names = "--minimum-queries", defaultValue = "300",
            description = "Queries sent one at a time to measure the minimum latency, after " + WARMUP_QUERIES + " unmeasured (default ${DEFAULT-VALUE}).")
    int minimumQueries;

    @Option(names = "--container-jar", defaultValue = "containers/emulated/target/emulated-container.jar",
            description = "The emulated container's jar (default ${DEFAULT-VALUE}).")
    String containerJar;

    @Option(names = "--input-length", defaultValue = "8", description = "Floats per input (default ${DEFAULT-VALUE}).")
    int inputLength;

    @Mixin
    TimeoutOption requestTimeout = new TimeoutOption(5000);

    @Mixin
    SeedOption seed;

    @Mixin
    ResultsOption results;

    /** One emulated hardware kind of a model. */
    record Kind(double betaMs, double alphaMs) {
        double latencyMs(int b) {
            return betaMs + alphaMs * b;
        }
    }

    /** A stage of the pipeline file. */
    record Stage(String name, String model) {
    }

    /** A stage's deployment: model, kind, replicas, batch size, deadline (0: none). */
    record Deployed(Stage stage, String hardware, int replicas, int maxBatch, long deadlineMicros) {
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        JsonNode pipeline = JSON.readTree(pipelineFile.toFile());
        List<Stage> stages = new ArrayList<>();
        for (JsonNode s : pipeline.get("stages")) {
            stages.add(new Stage(s.get("name").asText(), s.get("model").asText()));
        }
        List<Map<String, String>> edges = new ArrayList<>();
        for (JsonNode e : pipeline.path("edges")) {
            if (e.has("probability") || e.has("when")) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "conditional edges are not emulated; the pipeline must be unconditional");
            }
            edges.add(Map.of("from", e.get("from").asText(), "to", e.get("to").asText()));
        }
        Map<String, Map<String, Kind>> kinds = new LinkedHashMap<>();
        for (Path p : profileFiles) {
            JsonNode n = JSON.readTree(p.toFile());
            Map<String, Kind> byKind = new LinkedHashMap<>();
            n.get("hardware").fields().forEachRemaining(h -> {
                if (!h.getValue().has("beta_ms")) {
                    throw new IllegalArgumentException(p + ": kind '" + h.getKey() + "' has no beta_ms/alpha_ms");
                }
                byKind.put(h.getKey(), new Kind(h.getValue().get("beta_ms").asDouble(),
                        h.getValue().path("alpha_ms").asDouble()));
            });
            kinds.put(n.get("model").asText(), byKind);
        }
        JsonNode plan = planFile == null ? null : JSON.readTree(planFile.toFile());
        double offered = rate.given() ? rate.one() : plan == null ? 0 : plan.path("settings").path("rate").asDouble();

        RunConditions atStart = RunConditions.now();
        Instant startedAt = Instant.now();
        Path dir = results.create(SCENARIO);
        err.printf("%s: starting the gateway (process container manager)...%n", SCENARIO);
        GatewayProcess gateway = gatewayOptions.start(dir, SCENARIO, List.of(
                "--servegate.containers.manager=process",
                "--servegate.containers.process.require-admin-token=false"));
        Map<String, Object> minimum;
        List<Map<String, Object>> runs = new ArrayList<>();
        Map<String, Object> gatewayInfo;
        try {
            GatewayAdminClient admin = gateway.admin();
            // the minimum: every stage on its fastest kind at batch size 1, one replica, no plan
            List<Deployed> fastest = new ArrayList<>();
            double emulatedMinMs = 0;
            for (Stage s : stages) {
                Map<String, Kind> k = kinds.get(s.model());
                String best = k.entrySet().stream().min((a, b) -> Double.compare(a.getValue().latencyMs(1),
                        b.getValue().latencyMs(1))).orElseThrow().getKey();
                fastest.add(new Deployed(s, best, 1, 1, 0));
                emulatedMinMs += k.get(best).latencyMs(1);
            }
            err.printf("%s: measuring the minimum latency, %d queries one at a time...%n", SCENARIO, minimumQueries);
            deploy(admin, "minimum", fastest, kinds, edges, 1_000_000);
            Histogram alone = new Histogram(3);
            try (GatewayPredictWorkload load = new GatewayPredictWorkload(GatewayProcess.HOST, gateway.port(),
                    "minimum", new RandomInputs(inputLength), 1, requestTimeout.duration())) {
                for (int i = 0; i < WARMUP_QUERIES + minimumQueries; i++) {
                    long t0 = System.nanoTime();
                    GatewayAnswer a = load.send().get(requestTimeout.ms, TimeUnit.MILLISECONDS);
                    long took = System.nanoTime() - t0;
                    if (i >= WARMUP_QUERIES && !a.isDefault()) {
                        alone.recordValue(took);
                    }
                }
            }
            undeploy(admin, "minimum", fastest);
            double minMs = alone.getValueAtPercentile(50) / 1e6;
            minimum = new LinkedHashMap<>();
            minimum.put("queries", alone.getTotalCount());
            minimum.put("median_ms", round(minMs));
            minimum.put("min_ms", round(alone.getMinValue() / 1e6));
            minimum.put("p99_ms", round(alone.getValueAtPercentile(99) / 1e6));
            minimum.put("emulated_compute_ms", round(emulatedMinMs));
            minimum.put("overhead_per_stage_ms", round((minMs - emulatedMinMs) / stages.size()));
            minimum.put("overhead_per_stage_p99_ms",
                    round((alone.getValueAtPercentile(99) / 1e6 - emulatedMinMs) / stages.size()));
            minimum.put("slo_3x_ms", round(3 * minMs));
            err.printf(Locale.ROOT, "%s: minimum latency (median one at a time) %.2f ms: emulated compute %.2f ms, "
                    + "overhead %.2f ms per stage%n", SCENARIO, minMs, emulatedMinMs,
                    (minMs - emulatedMinMs) / stages.size());
            if (plan != null) {
                long sloMicros = Math.round(plan.get("slo_ms").asDouble() * 1000);
                for (String strategy : strategies) {
                    JsonNode p = null;
                    for (JsonNode x : plan.get("plans")) {
                        if (x.get("strategy").asText().equals(strategy) && x.path("feasible").asBoolean()) {
                            p = x;
                        }
                    }
                    if (p == null) {
                        err.printf("%s: no feasible plan '%s' in %s, skipped%n", SCENARIO, strategy, planFile);
                        continue;
                    }
                    runs.add(runPlan(admin, gateway, strategy, p, stages, kinds, edges, sloMicros, offered, err));
                }
            }
        } finally {
            gatewayInfo = ScenarioOptions.stop(gateway, dir, SCENARIO);
        }
        write(dir, minimum, runs, plan, offered, gatewayInfo, atStart, startedAt);
        return 0;
    }

    private Map<String, Object> runPlan(GatewayAdminClient admin, GatewayProcess gateway, String strategy, JsonNode p,
            List<Stage> stages, Map<String, Map<String, Kind>> kinds, List<Map<String, String>> edges, long sloMicros,
            double offered, PrintWriter err) throws Exception {
        List<Deployed> deployed = new ArrayList<>();
        for (Stage s : stages) {
            JsonNode c = null;
            for (JsonNode x : p.get("stages")) {
                if (x.get("stage").asText().equals(s.name())) {
                    c = x;
                }
            }
            if (c == null) {
                throw new IllegalArgumentException("plan '" + strategy + "' has no stage '" + s.name() + "'");
            }
            deployed.add(new Deployed(s, c.get("hardware").asText(), c.get("replicas").asInt(),
                    c.get("max_batch").asInt(), c.get("deadline_micros").asLong()));
        }
        err.printf(Locale.ROOT, "%s: plan %s: %s; %.0f s warm-up, %.0f s at %.0f/s...%n", SCENARIO, strategy,
                deployed.stream().map(d -> d.stage().name() + " " + d.hardware() + " x" + d.replicas() + " b"
                        + d.maxBatch()).toList(), warmup.seconds, duration.seconds, offered);
        deploy(admin, strategy, deployed, kinds, edges, sloMicros);
        long sloNanos = sloMicros * 1000;
        Histogram all = new Histogram(3);
        AtomicLong good = new AtomicLong();
        AtomicLong defaults = new AtomicLong();
        Map<String, AtomicLong> defaultsByStage = new ConcurrentHashMap<>();
        RunConditions before = RunConditions.now();
        Duration timeout = requestTimeout.duration();
        OpenLoopResult r;
        try (GatewayPredictWorkload load = new GatewayPredictWorkload(GatewayProcess.HOST, gateway.port(), strategy,
                new RandomInputs(inputLength), 512, timeout)) {
            r = new OpenLoop(offered, warmup.duration(), duration.duration(),
                    timeout, seed.seed()).run(load, (answer, latency) -> {
                        synchronized (all) {
                            all.recordValue(latency);
                        }
                        if (answer instanceof GatewayAnswer a && a.isDefault()) {
                            defaults.incrementAndGet();
                            Matcher m = STAGE.matcher(String.valueOf(a.explanation()));
                            defaultsByStage.computeIfAbsent(m.find() ? m.group(1) : "(none named)",
                                    k -> new AtomicLong()).incrementAndGet();
                        } else if (latency <= sloNanos) {
                            good.incrementAndGet();
                        }
                    });
        }
        Map<String, Object> stageRows = stageMetrics(gateway, deployed, strategy);
        undeploy(admin, strategy, deployed);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("strategy", strategy);
        m.put("cost_per_hour", p.get("cost_per_hour").asDouble());
        m.put("replicas", deployed.stream().mapToInt(Deployed::replicas).sum());
        m.put("stages", deployed.stream().map(d -> Map.of("stage", d.stage().name(), "hardware", d.hardware(),
                "replicas", d.replicas(), "max_batch", d.maxBatch(), "deadline_micros", d.deadlineMicros())).toList());
        m.put("sim_fresh_p99_ms", p.path("fresh").path("p99_ms").asDouble());
        m.put("sim_fresh_attainment", p.path("fresh").path("attainment").asDouble());
        m.put("scheduled", r.scheduled());
        m.put("answered", r.requests());
        m.put("errors", r.errors());
        m.put("unanswered", r.unanswered());
        m.put("defaults", defaults.get());
        m.put("defaults_by_stage", new TreeMap<>(defaultsByStage.entrySet().stream()
                .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().get()))));
        m.put("good", good.get());
        m.put("attainment", r.scheduled() == 0 ? Double.NaN : round4((double) good.get() / r.scheduled()));
        m.put("p50_ms", round(all.getValueAtPercentile(50) / 1e6));
        m.put("p99_ms", round(all.getValueAtPercentile(99) / 1e6));
        m.put("max_ms", round(all.getMaxValue() / 1e6));
        m.put("send_lag_p99_ms", r.sendLagP99Ms());
        m.put("stage_batches", stageRows);
        m.put("conditions", RunConditions.span(before, RunConditions.now()));
        err.printf(Locale.ROOT, "%s: plan %s: attainment %.4f, p99 %.2f ms, %d defaults %s%n", SCENARIO, strategy,
                (double) good.get() / Math.max(1, r.scheduled()), all.getValueAtPercentile(99) / 1e6, defaults.get(),
                m.get("defaults_by_stage"));
        return m;
    }

    /** Registers the plan's models (one per stage, named {@code <model>-<tag>}) and deploys them, then the pipeline. */
    private void deploy(GatewayAdminClient admin, String tag, List<Deployed> deployed, Map<String, Map<String, Kind>> kinds,
            List<Map<String, String>> edges, long sloMicros) throws IOException, InterruptedException {
        boolean planned = stageDeadlines == StageDeadlines.plan && deployed.stream().allMatch(d -> d.deadlineMicros() > 0);
        List<Map<String, Object>> stageDefs = new ArrayList<>();
        for (Deployed d : deployed) {
            Kind k = kinds.get(d.stage().model()).get(d.hardware());
            if (k == null) {
                throw new IllegalArgumentException("no profile of model '" + d.stage().model() + "' on kind '"
                        + d.hardware() + "'");
            }
            String model = d.stage().model() + "-" + tag;
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("model_name", model);
            body.put("model_version", "1");
            body.put("input_type", "floats");
            body.put("scheduler", policy);
            if (policy.equals("clipper")) {
                body.put("batch_size", d.maxBatch());
            }
            body.put("command", List.of("java", "-jar", containerJar, "--beta-ms", Double.toString(k.betaMs()),
                    "--alpha-ms", Double.toString(k.alphaMs()), "--input-type", "floats"));
            body.put("num_replicas", d.replicas());
            admin.post("deploy_model", body);
            Map<String, Object> st = new LinkedHashMap<>();
            st.put("name", d.stage().name());
            st.put("model", model);
            if (planned) {
                st.put("deadline_micros", d.deadlineMicros());
            }
            stageDefs.add(st);
        }
        for (Deployed d : deployed) {
            admin.awaitAvailableReplicas(d.stage().model() + "-" + tag, d.replicas(), Duration.ofSeconds(180));
        }
        Map<String, Object> def = new LinkedHashMap<>();
        def.put("name", tag);
        def.put("input_type", "floats");
        def.put("default_output", "-1");
        def.put("latency_slo_micros", sloMicros);
        def.put("stages", stageDefs);
        def.put("edges", edges);
        admin.post("add_pipeline", def);
    }

    private static void undeploy(GatewayAdminClient admin, String tag, List<Deployed> deployed)
            throws IOException, InterruptedException {
        admin.post("delete_pipeline", Map.of("name", tag));
        for (Deployed d : deployed) {
            admin.post("set_num_replicas", Map.of("model_name", d.stage().model() + "-" + tag, "model_version", "1",
                    "num_replicas", 0));
        }
    }

    /** Each stage's mean batch size and batch count so far, from the gateway's Prometheus scrape. */
    private static Map<String, Object> stageMetrics(GatewayProcess gateway, List<Deployed> deployed, String tag)
            throws InterruptedException {
        PrometheusText text = PrometheusText.parse(GatewayMetrics.scrapeText(gateway));
        Map<String, Object> rows = new LinkedHashMap<>();
        for (Deployed d : deployed) {
            String model = d.stage().model() + "-" + tag;
            double sum = text.sum("servegate_scheduler_batch_size_sum", "model", model);
            double count = text.sum("servegate_scheduler_batch_size_count", "model", model);
            rows.put(d.stage().name(), Map.of("batches", (long) count, "mean_batch", count == 0 ? 0 : round(sum / count)));
        }
        return rows;
    }

    private void write(Path dir, Map<String, Object> minimum, List<Map<String, Object>> runs, JsonNode plan,
            double offered, Map<String, Object> gatewayInfo, RunConditions atStart, Instant startedAt)
            throws IOException {
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("pipeline", pipelineFile.toString());
        settings.put("profiles", profileFiles.stream().map(Path::toString).toList());
        settings.put("plan", planFile == null ? null : planFile.toString());
        settings.put("slo_ms", plan == null ? null : plan.get("slo_ms").asDouble());
        settings.put("plan_overhead_ms", plan == null ? null : plan.path("settings").path("overhead_ms").asDouble());
        settings.put("rate", offered);
        settings.put("arrivals", "open loop, Poisson");
        settings.put("policy", policy);
        settings.put("stage_deadlines", stageDeadlines.name());
        settings.put("warmup_s", warmup.seconds);
        settings.put("duration_s", duration.seconds);
        settings.put("containers", "emulated (process manager, java -jar " + containerJar + ")");
        settings.put("seed", seed.seed());
        settings.put("gateway_jvm_args", gatewayOptions.jvmArgs);
        settings.put("gateway_args", gatewayOptions.gatewayArgs);
        String md = PipelinePlanReport.write(dir, settings, minimum, runs, gatewayInfo,
                ScenarioOptions.environment(atStart), atStart, startedAt);
        if (planFile != null) {
            Files.copy(planFile, dir.resolve("plan.json"));
        }
        spec.commandLine().getErr().printf("%s: report in %s%n%s", SCENARIO, dir, md);
        // the bench script reads the minimum from here to plan with an SLO of 3x it
        spec.commandLine().getOut().println(new ObjectMapper().writeValueAsString(minimum));
    }

    private static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }

    private static double round4(double v) {
        return Math.round(v * 10000) / 10000.0;
    }
}
