package io.servegate.loadgen.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.servegate.containers.emulated.EmulatedContainer;
import io.servegate.loadgen.harness.ContainerChild;
import io.servegate.loadgen.harness.GatewayMetrics;
import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.harness.PrometheusText;
import io.servegate.loadgen.load.AnswerTally;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.load.LatencySummary;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.loadgen.load.RandomInputs;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.loadgen.scenario.ServingOptimum;
import io.servegate.loadgen.scenario.ShadowCostPlan;
import io.servegate.loadgen.scenario.ShadowCostPlan.Candidate;
import io.servegate.loadgen.scenario.ShadowCostPlan.Leg;
import io.servegate.loadgen.scenario.ShadowCostPlan.Variant;
import io.servegate.workload.admin.GatewayAdminClient;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * What a shadow rollout costs the current version, live: one gateway, the current version (1) on
 * its own emulated replicas (a batch of b takes beta + alpha·b ms), each candidate on replicas of
 * its own (2 as fast, 3 slow, 4 stuck: from registration on, their batches take
 * {@code --slow-factor} or {@code --stuck-factor} times longer), and one app at
 * {@code --load-factor} of the current version's capacity (as the simulator computes it). Legs
 * with no rollout and legs with a shadow rollout of a variant alternate on the same gateway (A B,
 * then B A), each after {@code --settle-s} of the same load, and each pair offers the same
 * Poisson arrivals. It reports the app's goodput (answers within the SLO over queries offered)
 * with the shadow over without, latency, the copies sent and dropped, the rollout's own counts,
 * and the load average. The rollouts' guards are set so that they decide nothing while measured.
 * Performance is reported, never asserted.
 */
@Command(name = "shadow-cost", mixinStandardHelpOptions = true,
        description = "Goodput of the current version with and without a shadow rollout, alternating on one gateway.")
public final class ShadowCostCommand implements Callable<Integer> {

    static final String SCENARIO = "shadow-cost";
    private static final String APP = "shadow-app";
    private static final String MODEL = "shadow";
    private static final String SHADOW_METRIC = "servegate_rollout_shadow_total";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    /**
     * Guards a candidate cannot breach or pass within a benchmark's copies: the rollout keeps
     * copying, at the variant's fraction from the start (no warm-up, whose copies go through the
     * same admission as a shadow copying every query).
     */
    private static final Map<String, Object> UNDECIDING_GUARDS = Map.of("max_slo_miss_increase", 0.999,
            "max_error_rate", 0.999, "max_loss_increase", 0.999, "min_feedback", 1_000_000_000L, "warmup_queries", 0);

    @Spec
    CommandSpec spec;

    @Mixin
    GatewayOptions gatewayOptions = new GatewayOptions();

    @Option(names = "--variants", split = ",", defaultValue = "equal:1,stuck:1",
            description = "Shadow rollouts to measure, each KIND[:FRACTION]: equal (the candidate is as fast as the "
                    + "current version), slow or stuck; FRACTION is shadow_fraction (default ${DEFAULT-VALUE}).")
    List<String> variantTexts;

    @Option(names = "--rounds", defaultValue = "2",
            description = "Rounds; each measures every variant beside a leg without rollout (default ${DEFAULT-VALUE}).")
    int rounds;

    @Mixin
    RateOption rate = new RateOption();

    @Option(names = "--load-factor", defaultValue = "0.8",
            description = "Without --rate: the offered load as a multiple of the current version's capacity "
                    + "(default ${DEFAULT-VALUE}).")
    double loadFactor;

    @Mixin
    SloOption slo = new SloOption(50);

    @Mixin
    BatchCostOption cost = new BatchCostOption(10, 1);

    @Option(names = "--replicas", defaultValue = "1",
            description = "Replicas of each version (default ${DEFAULT-VALUE}).")
    int replicas;

    @Option(names = "--max-batch", defaultValue = "32",
            description = "Replicas' maximum batch (default ${DEFAULT-VALUE}).")
    int maxBatch;

    @Option(names = "--slow-factor", defaultValue = "3",
            description = "The slow candidate's batches take this many times longer (default ${DEFAULT-VALUE}).")
    double slowFactor;

    @Option(names = "--stuck-factor", defaultValue = "1000",
            description = "The stuck candidate's batches take this many times longer (default ${DEFAULT-VALUE}).")
    double stuckFactor;

    @Option(names = "--container-jvm-arg", defaultValue = "-Xmx128m",
            description = "JVM option of each emulated container process, repeatable (default ${DEFAULT-VALUE}).")
    List<String> containerJvmArgs = new ArrayList<>();

    @Mixin
    WarmupOption warmup = new WarmupOption(30);

    @Option(names = "--settle-s", defaultValue = "5",
            description = "Unmeasured seconds of load at the start of each leg, after the rollout started or "
                    + "stopped (default ${DEFAULT-VALUE}).")
    double settleS;

    @Mixin
    DurationOption duration = new DurationOption(20);

    @Mixin
    ConnectionsOption connections = new ConnectionsOption(256);

    @Mixin
    SeedOption seed;

    @Mixin
    ResultsOption results;

    private final Duration timeout = Duration.ofSeconds(5);

    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        List<Variant> variants = new ArrayList<>();
        try {
            for (String v : variantTexts) {
                variants.add(Variant.parse(v));
            }
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        if (rounds < 1 || replicas < 1 || !(duration.seconds() > 0) || !(settleS >= 0) || !(warmup.seconds() >= 0)
                || !(loadFactor > 0) || !(slowFactor > 0) || !(stuckFactor > 0)) {
            throw new ParameterException(spec.commandLine(), "--rounds, --replicas, --duration-s, --load-factor and "
                    + "the factors must be positive, --settle-s and --warmup-s >= 0");
        }
        double capacity = ServingOptimum.staggered(replicas, cost.betaMs(), cost.alphaMs(), slo.ms()).perSec();
        double qps = rate.given() ? rate.one() : loadFactor * capacity;
        List<Leg> legs = ShadowCostPlan.legs(variants, rounds);
        Path dir = results.create(SCENARIO);
        RunConditions atStart = RunConditions.now();
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("settings", settings(variants, capacity, qps));
        List<Map<String, Object>> measured = new ArrayList<>();
        List<ShadowCostPlan.Outcome> outcomes = new ArrayList<>();
        List<ContainerChild> containers = new ArrayList<>();
        GatewayProcess gateway = null;
        try {
            Map<Candidate, List<ContainerChild>> candidates = new EnumMap<>(Candidate.class);
            List<ContainerChild> current = start("1", 1, null, dir, containers);
            for (Variant v : variants) {
                if (!candidates.containsKey(v.candidate())) {
                    candidates.put(v.candidate(), start(version(v.candidate()), factor(v.candidate()),
                            dir.resolve("slow-" + v.candidate().label()), dir, containers));
                }
            }
            err.printf("%s: current version on %d replica(s), capacity %.0f/s; offering %.0f/s; %d legs of %.0f s "
                    + "(after %.0f s each to settle)%n", SCENARIO, replicas, capacity, qps, legs.size(),
                    duration.seconds(), settleS);
            gateway = gatewayOptions.start(dir, SCENARIO);
            GatewayAdminClient admin = gateway.admin();
            register(admin, current, candidates);
            for (Candidate c : candidates.keySet()) {
                if (c != Candidate.EQUAL) {
                    Files.createFile(dir.resolve("slow-" + c.label())); // profiled as fast; slow from now on
                }
            }
            try (GatewayPredictWorkload w = new GatewayPredictWorkload(GatewayProcess.HOST, gateway.port(), APP,
                    new RandomInputs(8), connections.max(), timeout)) {
                FleetCommand.awaitPredicting(w);
                if (warmup.seconds() > 0) { // the copies' code path warms up too
                    err.printf("%s: warm-up %.0f s under a shadow of %s...%n", SCENARIO, warmup.seconds(),
                            variants.get(0).label());
                    startRollout(admin, variants.get(0));
                    new OpenLoop(qps, Duration.ZERO, warmup.duration(), timeout, seed.seed() + 9999).run(w);
                    stopRollout(admin);
                }
                for (int i = 0; i < legs.size(); i++) {
                    Leg leg = legs.get(i);
                    Map<String, Object> m = leg(leg, i, admin, gateway, w, qps, err);
                    measured.add(m);
                    outcomes.add(new ShadowCostPlan.Outcome(leg, (Long) m.get("offered"), (Long) m.get("in_slo")));
                }
            }
        } finally {
            if (gateway != null) {
                report.put("gateway", ScenarioOptions.stop(gateway, dir, SCENARIO));
            }
            for (ContainerChild c : containers) {
                c.close();
            }
            report.put("conditions", RunConditions.span(atStart, RunConditions.now()));
            report.put("legs", measured);
            List<ShadowCostPlan.Comparison> comparisons = ShadowCostPlan.compare(outcomes);
            report.put("comparisons", summaries(comparisons, measured));
            JSON.writeValue(dir.resolve("shadow-cost.json").toFile(), report);
            print(err, measured, comparisons);
            err.printf("%s: results in %s%n", SCENARIO, dir);
        }
        return 0;
    }

    /** One leg: the rollout started (or none), settle, the measured window, the rollout's counts, stopped. */
    private Map<String, Object> leg(Leg leg, int index, GatewayAdminClient admin, GatewayProcess gateway,
            GatewayPredictWorkload w, double qps, PrintWriter err) throws Exception {
        if (leg.variant() != null) {
            startRollout(admin, leg.variant());
        }
        if (settleS > 0) {
            new OpenLoop(qps, Duration.ZERO, GatewayOverheadCommand.seconds(settleS), timeout,
                    seed.seed() + 5000 + index).run(w);
        }
        RunConditions conditions = RunConditions.now();
        String before = GatewayMetrics.scrapeText(gateway);
        AnswerTally tally = new AnswerTally(slo.nanos());
        // both legs of a pair offer the same arrivals
        OpenLoopResult r = new OpenLoop(qps, Duration.ZERO, duration.duration(), timeout,
                seed.seed() + 100L * leg.round() + leg.pair()).run(w, tally);
        String after = GatewayMetrics.scrapeText(gateway);
        AnswerTally.Counts counts = tally.counts();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("round", leg.round());
        m.put("leg", leg.label());
        m.put("utc", Instant.now().toString());
        m.put("offered", r.sentInWindow());
        m.put("offered_rps", r.sentInWindow() / r.durationS());
        m.put("in_slo", counts.goodput());
        m.put("in_slo_pct", 100.0 * counts.goodput() / Math.max(1, r.sentInWindow()));
        m.put("predictions", counts.predictions());
        m.put("defaults", counts.defaultsByExplanation());
        m.put("errors", r.errors());
        LatencySummary latency = r.latency();
        m.put("p50_ms", latency == null ? null : latency.p50Ms());
        m.put("p99_ms", latency == null ? null : latency.p99Ms());
        m.put("load_average_1m", conditions.loadAverage1m());
        if (before != null && after != null) {
            m.put("shadow_copies", shadowCopies(after, before));
            GatewayMetrics.Summary inside = GatewayMetrics.parse(after).minus(GatewayMetrics.parse(before)).summary();
            m.put("gateway_cpu_ms_per_query", inside.cpuMsPerQuery());
        }
        if (leg.variant() != null) {
            JsonNode rollout = admin.post("get_rollout", Map.of("model_name", MODEL));
            JsonNode candidate = rollout.path("evidence").path("candidate");
            m.put("rollout_status", rollout.path("status").asText());
            m.put("candidate_queries", candidate.path("queries").asLong());
            m.put("candidate_slo_misses", candidate.path("slo_misses").asLong());
            m.put("candidate_errors", candidate.path("errors").asLong());
            stopRollout(admin);
        }
        err.printf("%s: round %d %-10s %6.1f %% in SLO, p50 %s ms, p99 %s ms, copies %s, load %.1f%n", SCENARIO,
                leg.round(), leg.label(), m.get("in_slo_pct"), format(m.get("p50_ms")), format(m.get("p99_ms")),
                m.getOrDefault("shadow_copies", "-"), conditions.loadAverage1m());
        return m;
    }

    /** Copies sent or dropped per outcome between two scrapes. */
    static Map<String, Long> shadowCopies(String after, String before) {
        Map<String, Double> a = PrometheusText.parse(after).sumBy(SHADOW_METRIC, "model", MODEL, "outcome");
        Map<String, Double> b = PrometheusText.parse(before).sumBy(SHADOW_METRIC, "model", MODEL, "outcome");
        Map<String, Long> out = new LinkedHashMap<>();
        for (String outcome : List.of("sent", "dropped_busy", "dropped_in_flight")) {
            out.put(outcome, Math.round(a.getOrDefault(outcome, 0.0) - b.getOrDefault(outcome, 0.0)));
        }
        return out;
    }

    private static void startRollout(GatewayAdminClient admin, Variant v) throws IOException, InterruptedException {
        admin.post("start_rollout", Map.of("model_name", MODEL, "candidate_version", version(v.candidate()),
                "mode", "shadow", "shadow_fraction", v.fraction(), "guards", UNDECIDING_GUARDS));
    }

    /** Aborts the rollout if it still runs (one that decided by itself has stopped copying already). */
    private static void stopRollout(GatewayAdminClient admin) throws IOException, InterruptedException {
        String status = admin.post("get_rollout", Map.of("model_name", MODEL)).path("status").asText();
        if (status.equals("running") || status.equals("paused")) {
            admin.post("abort_rollout", Map.of("model_name", MODEL));
        }
    }

    /** The model's version serving as candidate {@code c}. */
    static String version(Candidate c) {
        return switch (c) {
            case EQUAL -> "2";
            case SLOW -> "3";
            case STUCK -> "4";
        };
    }

    private double factor(Candidate c) {
        return switch (c) {
            case EQUAL -> 1;
            case SLOW -> slowFactor;
            case STUCK -> stuckFactor;
        };
    }

    /** The replicas of one version; slower by {@code factor} while {@code slowFile} exists. */
    private List<ContainerChild> start(String version, double factor, Path slowFile, Path dir,
            List<ContainerChild> all) throws IOException, InterruptedException {
        List<ContainerChild> started = new ArrayList<>();
        for (int i = 0; i < replicas; i++) {
            List<String> args = new ArrayList<>(List.of("--name", MODEL, "--version", version, "--beta-ms",
                    Double.toString(cost.betaMs()), "--alpha-ms", Double.toString(cost.alphaMs()), "--input-type", "floats",
                    "--max-batch-size", Integer.toString(maxBatch), "--drain-seconds", "1"));
            if (slowFile != null && factor != 1) {
                args.addAll(List.of("--slow-factor", Double.toString(factor), "--slow-file", slowFile.toString()));
            }
            ContainerChild c = ContainerChild.start(EmulatedContainer.class, containerJvmArgs, args,
                    dir.resolve("container-v" + version + "-" + i + ".log"), 120);
            all.add(c);
            started.add(c);
        }
        return started;
    }

    /** The app on the model; every version with its replicas; version 1 current, as before a rollout. */
    private void register(GatewayAdminClient admin, List<ContainerChild> current,
            Map<Candidate, List<ContainerChild>> candidates) throws IOException, InterruptedException {
        admin.addApp(APP, "floats", "-1", Math.round(slo.ms() * 1000));
        Map<String, List<ContainerChild>> byVersion = new LinkedHashMap<>();
        byVersion.put("1", current);
        candidates.forEach((c, replicasOf) -> byVersion.put(version(c), replicasOf));
        for (var e : byVersion.entrySet()) {
            admin.addModel(MODEL, e.getKey(), "floats", -1); // each add_model makes its version current
            for (ContainerChild c : e.getValue()) {
                admin.awaitAvailable(admin.addContainer(MODEL, e.getKey(), c.address()), Duration.ofSeconds(60));
            }
        }
        admin.post("set_model_version", Map.of("model_name", MODEL, "model_version", "1"));
        admin.addModelLinks(APP, List.of(MODEL));
    }

    /** Per variant: the ratio, and the means of its legs and of the legs paired with them. */
    private static List<Map<String, Object>> summaries(List<ShadowCostPlan.Comparison> comparisons,
            List<Map<String, Object>> legs) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (ShadowCostPlan.Comparison c : comparisons) {
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("variant", c.variant().label());
            s.put("goodput_without_pct", 100 * c.without());
            s.put("goodput_with_pct", 100 * c.with());
            s.put("ratio", c.ratio());
            s.put("pair_ratios", c.pairRatios());
            long sent = 0;
            long dropped = 0;
            for (Map<String, Object> leg : legs) {
                if (c.variant().label().equals(leg.get("leg")) && leg.get("shadow_copies") instanceof Map<?, ?> copies) {
                    sent += (Long) copies.get("sent");
                    dropped += (Long) copies.get("dropped_busy") + (Long) copies.get("dropped_in_flight");
                }
            }
            s.put("copies_sent", sent);
            s.put("copies_dropped", dropped);
            out.add(s);
        }
        return out;
    }

    private static void print(PrintWriter err, List<Map<String, Object>> legs,
            List<ShadowCostPlan.Comparison> comparisons) {
        err.printf("%s: %5s %-10s %8s %8s %8s %8s %8s %8s %6s%n", SCENARIO, "round", "leg", "offered/s", "in SLO",
                "p50 ms", "p99 ms", "sent", "dropped", "load");
        for (Map<String, Object> m : legs) {
            Object copies = m.get("shadow_copies");
            long sent = copies instanceof Map<?, ?> c ? (Long) c.get("sent") : 0;
            long dropped = copies instanceof Map<?, ?> c
                    ? (Long) c.get("dropped_busy") + (Long) c.get("dropped_in_flight") : 0;
            err.printf("%s: %5d %-10s %8.1f %7.2f%% %8s %8s %8d %8d %6.1f%n", SCENARIO, m.get("round"), m.get("leg"),
                    m.get("offered_rps"), m.get("in_slo_pct"), format(m.get("p50_ms")), format(m.get("p99_ms")),
                    sent, dropped, m.get("load_average_1m"));
        }
        for (ShadowCostPlan.Comparison c : comparisons) {
            err.printf("%s: %-10s goodput %.2f %% with the shadow, %.2f %% without: ratio %.4f (per round %s)%n",
                    SCENARIO, c.variant().label(), 100 * c.with(), 100 * c.without(), c.ratio(),
                    c.pairRatios().stream().map(x -> String.format(java.util.Locale.ROOT, "%.4f", x)).toList());
        }
    }

    private static String format(Object ms) {
        return ms instanceof Double d ? String.format(java.util.Locale.ROOT, "%.1f", d) : "-";
    }

    private Map<String, Object> settings(List<Variant> variants, double capacity, double qps) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("variants", variants.stream().map(Variant::label).toList());
        s.put("rounds", rounds);
        s.put("order", "A B in odd rounds, B A in even ones, one gateway throughout; a pair offers the same arrivals");
        s.put("replicas_per_version", replicas);
        s.put("replica", "emulated container process: a batch of b takes " + cost.betaMs() + " + " + cost.alphaMs() + "·b ms, JVM "
                + containerJvmArgs);
        s.put("slow_factor", slowFactor);
        s.put("stuck_factor", stuckFactor);
        s.put("max_batch", maxBatch);
        s.put("slo_ms", slo.ms());
        s.put("capacity_per_s", capacity);
        s.put("capacity_from", "ServingOptimum.staggered (the simulator's optimum)");
        s.put("rate", qps);
        s.put("arrivals", "Poisson");
        s.put("warmup_s", warmup.seconds());
        s.put("settle_s", settleS);
        s.put("duration_s", duration.seconds());
        s.put("guards", UNDECIDING_GUARDS);
        s.put("seed", seed.seed());
        s.put("gateway_jar", gatewayOptions.jar.toString());
        s.put("gateway_jvm_args", gatewayOptions.jvmArgs);
        s.put("gateway_args", gatewayOptions.gatewayArgs);
        return s;
    }
}
