package io.servegate.sim.cli;

import io.servegate.sim.Scenario;
import io.servegate.sim.latency.HardwareCosts;
import io.servegate.sim.latency.ModelProfiles;
import io.servegate.sim.pipeline.PipelineConfig;
import io.servegate.sim.pipeline.PipelineEstimate;
import io.servegate.sim.pipeline.PipelineEstimator;
import io.servegate.sim.pipeline.PipelinePlan;
import io.servegate.sim.pipeline.PipelinePlanner;
import io.servegate.sim.pipeline.PipelineSpec;
import io.servegate.sim.pipeline.PipelineTuning;
import io.servegate.sim.pipeline.PlanStrategy;
import io.servegate.sim.pipeline.StageConfig;
import io.servegate.sim.report.PlanTable;
import io.servegate.sim.report.Summary;
import io.servegate.sim.workload.ScalingWorkloads;
import io.servegate.workload.arrival.RateTrace;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code bin/sim plan}: InferLine's planner for a pipeline ({@link PipelinePlanner}) on a sample
 * trace, optionally beside the coarse-grained and batch-size-1 baselines. Prints each plan as a
 * table and writes them as JSON; every plan is also estimated on a fresh trace of the same
 * process (another seed), which is the attainment to expect of it. With {@code --tune-steps},
 * the InferLine plan also runs on a step trace of the fresh seed, static and with every stage
 * scaled on its own ({@link PipelineTuning}).
 *
 * <p>The pipeline and profiles come from files, or from a gateway ({@code --gateway URL
 * --pipeline NAME}): its pipeline definition and the profiles its profiler stored. With a
 * gateway, InferLine's plan is then applied there ({@code apply_pipeline_plan}: replicas, batch
 * caps, stage deadlines) unless {@code --dry-run}.
 */
@Command(name = "plan", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Plans a pipeline's per-stage batch size, replicas and hardware (InferLine's greedy planner).")
final class PlanCommand implements Callable<Integer> {

    @Parameters(index = "0", arity = "0..1", paramLabel = "PIPELINE", description = "the pipeline (JSON: stages, edges, slo_ms); not with --gateway")
    Path pipeline;

    @Option(names = "--profiles", split = ",", description = "model profile files (JSON, one per model); not with --gateway")
    List<Path> profiles;

    @Option(names = "--gateway", description = "a gateway's admin URL, e.g. http://127.0.0.1:1338: read --pipeline and the stored profiles there, and apply the plan")
    String gateway;

    @Option(names = "--pipeline", description = "with --gateway: the pipeline's name")
    String pipelineName;

    @Option(names = "--token", defaultValue = "${env:SERVEGATE_ADMIN_TOKEN}", description = "with --gateway: the admin bearer token (default: $SERVEGATE_ADMIN_TOKEN)")
    String token;

    @Option(names = "--probability", description = "with --gateway: the probability that a conditional edge is taken, FROM:TO=P (repeatable)")
    Map<String, Double> probabilities = new LinkedHashMap<>();

    @Option(names = "--dry-run", description = "with --gateway: print the plan, do not apply it")
    boolean dryRun;

    @Option(names = "--costs", required = true, description = "cost table (JSON: per_replica_hour by hardware kind)")
    Path costs;

    @Option(names = "--slo-ms", description = "end-to-end SLO (default: the pipeline's slo_ms)")
    Double sloMs;

    @Option(names = "--slo-min-multiple", description = "SLO = this × the pipeline's minimum latency (longest path at batch size 1 on the fastest hardware)")
    Double sloMultiple;

    @Option(names = "--rate", defaultValue = "100", description = "mean arrival rate of the sample trace, queries/s (default: ${DEFAULT-VALUE})")
    double rate;

    @Option(names = "--arrivals", defaultValue = "poisson", description = "poisson, gamma, uniform, onoff or trace (default: ${DEFAULT-VALUE})")
    String arrivals;

    @Option(names = "--cv2", defaultValue = "4", description = "squared coefficient of variation of Gamma gaps (default: ${DEFAULT-VALUE})")
    double cv2;

    @Option(names = "--trace", description = "rate trace (see bin/sim --help), scaled to --rate")
    Path trace;

    @Option(names = "--trace-bin-s", defaultValue = "1", description = "interval of a counts-per-interval trace, s (default: ${DEFAULT-VALUE})")
    double traceBinS;

    @Option(names = "--duration-s", defaultValue = "30", description = "seconds of the sample trace (default: ${DEFAULT-VALUE})")
    double durationS;

    @Option(names = "--seed", defaultValue = "1", description = "seed of the sample trace (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--check-seed", description = "seed of the fresh trace each plan is checked on (default: --seed + 1)")
    Long checkSeed;

    @Option(names = "--overhead-ms", defaultValue = "0", description = "round-trip transport overhead per batch and stage (default: ${DEFAULT-VALUE})")
    double overheadMs;

    @Option(names = "--max-batch", defaultValue = "64", description = "largest batch size a stage may get (default: ${DEFAULT-VALUE})")
    int maxBatch;

    @Option(names = "--max-replicas", defaultValue = "256", description = "most replicas a stage may get (default: ${DEFAULT-VALUE})")
    int maxReplicas;

    @Option(names = "--baselines", description = "also plan the coarse-grained and batch-size-1 baselines")
    boolean baselines;

    @Option(names = "--tune-steps", split = ",",
            description = "run the InferLine plan on Poisson steps MULTIPLE:SECONDS of --rate (e.g. 1:60,2.5:60,1:60), "
                    + "static and with per-stage autoscalers planning for each stage's budget")
    List<String> tuneSteps;

    @Option(names = "--tune-max-replicas", defaultValue = "32", description = "tuning: most replicas per stage (default: ${DEFAULT-VALUE})")
    int tuneMaxReplicas;

    @Option(names = "--tune-start-s", defaultValue = "2", description = "tuning: a new replica's start time (default: ${DEFAULT-VALUE})")
    double tuneStartS;

    @Option(names = "--tune-tick-s", defaultValue = "1", description = "tuning: autoscaler period (default: ${DEFAULT-VALUE})")
    double tuneTickS;

    @Option(names = "--tune-cooldown-s", defaultValue = "15", description = "tuning: scale-down cooldown (default: ${DEFAULT-VALUE})")
    double tuneCooldownS;

    @Mixin
    OutputOptions output;

    @Spec
    CommandSpec commandSpec;

    @Override
    public Integer call() throws Exception {
        PipelineSpec spec;
        ModelProfiles models;
        HardwareCosts table;
        double minLatencyMs;
        PipelinePlanner planner;
        PipelineEstimator check;
        GatewayAdmin admin = null;
        try { // bad input: the reason and the usage, not a stack trace
            if (gateway != null) {
                if (pipeline != null || profiles != null || pipelineName == null) {
                    throw new IllegalArgumentException("with --gateway give --pipeline NAME, and no PIPELINE file or --profiles");
                }
                admin = new GatewayAdmin(gateway, token);
                spec = admin.pipeline(pipelineName, probabilities);
                models = admin.profiles();
            } else {
                if (pipeline == null || profiles == null || pipelineName != null || dryRun || !probabilities.isEmpty()) {
                    throw new IllegalArgumentException("give a PIPELINE file and --profiles, or --gateway with --pipeline "
                            + "(--dry-run and --probability go with --gateway)");
                }
                spec = PipelineSpec.read(pipeline);
                models = ModelProfiles.read(profiles);
            }
            table = HardwareCosts.read(costs);
            minLatencyMs = minimumLatencyMs(spec, models, table);
            if (sloMultiple != null) {
                spec = spec.withSloMs(sloMultiple * minLatencyMs);
            } else if (sloMs != null) {
                spec = spec.withSloMs(sloMs);
            }
            if (Double.isNaN(spec.sloMs())) {
                throw new IllegalArgumentException("the pipeline has no slo_ms: give --slo-ms or --slo-min-multiple");
            }
            long overhead = Math.round(overheadMs * 1e6);
            planner = new PipelinePlanner(new PipelineEstimator(spec, models, sample(seed), overhead), table, maxBatch,
                    maxReplicas);
            check = new PipelineEstimator(spec, models, sample(checkSeed != null ? checkSeed : seed + 1), overhead);
        } catch (IOException | IllegalArgumentException e) {
            throw new ParameterException(commandSpec.commandLine(), e.getMessage(), e);
        }
        List<PlanStrategy> strategies = baselines ? List.of(PlanStrategy.values()) : List.of(PlanStrategy.INFERLINE);
        System.out.printf(Locale.ROOT, "pipeline %s: %d stages, SLO %.2f ms (minimum latency %.2f ms), %s arrivals at %.1f/s for %.0f s%n",
                spec.name(), spec.stages().size(), spec.sloMs(), minLatencyMs, arrivals, rate, durationS);
        List<Map<String, Object>> plans = new ArrayList<>();
        PipelinePlan applicable = null;
        Map<String, Object> tuning = null;
        for (PlanStrategy s : strategies) {
            long start = System.nanoTime();
            Optional<PipelinePlan> plan = planner.plan(s);
            double seconds = (System.nanoTime() - start) / 1e9;
            if (plan.isEmpty()) {
                System.out.printf(Locale.ROOT, "%n%s: no configuration meets the SLO%n", s.id());
                plans.add(Map.of("strategy", s.id(), "feasible", false));
                continue;
            }
            PipelinePlan p = plan.get();
            if (s == PlanStrategy.INFERLINE) {
                applicable = p;
            }
            PipelineEstimate fresh = check.estimate(p.config());
            System.out.print(PlanTable.text(spec, models, p, fresh, seconds));
            plans.add(PlanTable.json(spec, models, p, fresh, seconds));
            if (s == PlanStrategy.INFERLINE && tuneSteps != null) {
                tuning = tune(check, p.stageBudgetsMicros(spec, models), p.config(), table);
            }
        }
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("pipeline", spec.name());
        summary.put("slo_ms", Summary.round(spec.sloMs()));
        summary.put("minimum_latency_ms", Summary.round(minLatencyMs));
        summary.put("costs_per_replica_hour", table.perHour());
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("arrivals", arrivals);
        settings.put("rate", rate);
        settings.put("duration_s", durationS);
        settings.put("seed", seed);
        settings.put("check_seed", checkSeed != null ? checkSeed : seed + 1);
        settings.put("overhead_ms", overheadMs);
        settings.put("max_batch", maxBatch);
        settings.put("max_replicas", maxReplicas);
        summary.put("settings", settings);
        summary.put("plans", plans);
        if (admin != null && applicable != null) {
            Map<String, Object> request = applyRequest(spec, models, applicable);
            summary.put("apply_request", request);
            if (dryRun) {
                System.out.printf("%ndry run: not applied to %s%n", gateway);
            } else {
                summary.put("applied", admin.apply(request));
                System.out.printf("%napplied to pipeline %s at %s%n", spec.name(), gateway);
            }
        }
        if (tuning != null) {
            summary.put("tuning", tuning);
        }
        Path dir = output.write("plan", summary);
        if (dir != null) {
            PlanTable.page(dir, summary, plans);
        }
        return 0;
    }

    /** The body of the gateway's {@code apply_pipeline_plan}: each stage's replicas, batch cap, hardware and budget. */
    private static Map<String, Object> applyRequest(PipelineSpec spec, ModelProfiles models, PipelinePlan plan) {
        long[] budgets = plan.stageBudgetsMicros(spec, models);
        Map<String, Object> stages = new LinkedHashMap<>();
        for (int i = 0; i < spec.stages().size(); i++) {
            StageConfig c = plan.config().stage(i);
            Map<String, Object> stage = new LinkedHashMap<>();
            stage.put("replicas", c.replicas());
            stage.put("max_batch_size", c.maxBatch());
            stage.put("hardware", c.hardware());
            stage.put("deadline_micros", budgets[i]);
            stages.put(spec.stages().get(i).name(), stage);
        }
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("pipeline", spec.name());
        request.put("stages", stages);
        return request;
    }

    /** The plan on the --tune-steps trace, static and tuned: printed, and returned for the JSON. */
    private Map<String, Object> tune(PipelineEstimator estimator, long[] budgets, PipelineConfig config,
            HardwareCosts table) {
        double[] rates = new double[tuneSteps.size()];
        int[] seconds = new int[tuneSteps.size()];
        for (int i = 0; i < rates.length; i++) {
            String[] p = tuneSteps.get(i).trim().split(":");
            if (p.length != 2) {
                throw new ParameterException(commandSpec.commandLine(), "--tune-steps wants MULTIPLE:SECONDS, got "
                        + tuneSteps.get(i));
            }
            rates[i] = Double.parseDouble(p[0]) * rate;
            seconds[i] = Integer.parseInt(p[1]);
        }
        RateTrace steps = ScalingWorkloads.steps(rates, seconds);
        long seed = checkSeed != null ? checkSeed : this.seed + 1;
        Scenario arrivals = new ScenarioBuilder().trace(steps).rate(steps.meanRate())
                .durationS(steps.durationNanos() / 1e9).seed(seed).build();
        PipelineTuning.Settings settings = new PipelineTuning.Settings(1, tuneMaxReplicas, Math.round(tuneStartS * 1e9),
                Math.round(tuneTickS * 1e9), Math.round(tuneCooldownS * 1e9));
        List<PipelineTuning.Outcome> outcomes = PipelineTuning.compare(estimator, config, budgets, arrivals, seconds,
                settings, table);
        System.out.printf(Locale.ROOT, "%ntuning the inferline plan on %s (seed %d), per stage 1..%d replicas, start %.1f s,"
                + " tick %.1f s, cooldown %.0f s:%n", steps.source(), seed, tuneMaxReplicas, tuneStartS, tuneTickS,
                tuneCooldownS);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (PipelineTuning.Outcome o : outcomes) {
            System.out.printf(Locale.ROOT, "  %-7s attainment %.4f, per step %s; p99 %.2f ms; mean cost %.3f/h; per stage %s%n",
                    o.tuned() ? "tuned" : "static", o.attainment(), o.phaseAttainment().stream()
                            .map(a -> String.format(Locale.ROOT, "%.4f", a)).toList(), o.p99Ms(), o.costPerHour(),
                    o.stages().stream().map(st -> String.format(Locale.ROOT, "%s (budget %.1f ms) peak %d, %d decisions",
                            st.stage(), st.budgetMicros() / 1000.0, st.peakReplicas(), st.decisions())).toList());
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("mode", o.tuned() ? "tuned" : "static");
            m.put("attainment", Summary.round(o.attainment()));
            m.put("attainment_per_step", o.phaseAttainment().stream().map(Summary::round).toList());
            m.put("p99_ms", Summary.round(o.p99Ms()));
            m.put("mean_cost_per_hour", Summary.round(o.costPerHour()));
            m.put("stages", o.stages());
            rows.add(m);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("trace", steps.source());
        out.put("seed", seed);
        out.put("settings", settings);
        out.put("runs", rows);
        return out;
    }

    /** The pipeline's latency with no queueing: the longest path at batch size 1, each stage on its fastest priced kind. */
    private static double minimumLatencyMs(PipelineSpec spec, ModelProfiles models, HardwareCosts table) {
        return spec.longestPath(i -> models.kinds(spec.stages().get(i).model()).stream().filter(table::has)
                .mapToDouble(k -> models.latency(spec.stages().get(i).model(), k).meanNanos(1) / 1e6).min()
                .orElseThrow(() -> new IllegalArgumentException("model '" + spec.stages().get(i).model()
                        + "' has no profile on a hardware kind of the cost table")));
    }

    /** The arrivals: a one-model scenario of the chosen process, whose workload the estimator replays. */
    private Scenario sample(long s) throws IOException {
        ScenarioBuilder b = new ScenarioBuilder().rate(rate).cv2(cv2).seed(s).durationS(durationS)
                .arrivals(ScenarioBuilder.Arrivals.valueOf(arrivals.trim().toUpperCase(Locale.ROOT)));
        if (trace != null) {
            b.trace(RateTrace.read(trace, traceBinS, null));
        }
        return b.build();
    }
}
