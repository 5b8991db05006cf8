package io.servegate.loadgen.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.servegate.loadgen.harness.ContainerChild;
import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.harness.RedisChild;
import io.servegate.loadgen.load.AnswerTally;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.load.LatencySummary;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.loadgen.load.RandomInputs;
import io.servegate.loadgen.load.RoundRobinWorkload;
import io.servegate.loadgen.load.Workload;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.workload.admin.GatewayAdminClient;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * A fleet of gateways against one gateway, live, in one run: the same replicas (Python SDK
 * containers whose batch of b takes beta + alpha·b ms) serve first one gateway alone (in-memory
 * registry), then a fleet of gateways sharing a {@code redis-server} of its own, under the same
 * Poisson load, sent round robin across the fleet. It reports the fleet's goodput against the
 * single gateway's, and what forwarding adds to the median (the owner's predictions against the
 * other gateways'). Then, under the same load, requests of many rows to an app with a longer SLO
 * go to the gateways that do not own the version ({@link FleetBulkPhase}). Then, still under load and with feedback streaming to an app that learns
 * from it, it stops the gateway that owns the model version ({@code kill -9}, or SIGTERM with
 * {@code --owner-stop term}) and reports when predictions resumed, the queries lost after the stop,
 * a per-second timeline, and the feedback acknowledged against the feedback stored. Performance is
 * reported, never asserted.
 */
@Command(name = "fleet", mixinStandardHelpOptions = true,
        description = "Goodput of a fleet of gateways against one gateway, then kill -9 (or SIGTERM) of the owner under "
                + "load.")
public final class FleetCommand implements Callable<Integer> {

    static final String SCENARIO = "fleet";
    private static final String APP = "fleet";
    private static final String FEEDBACK_APP = "fleet-feedback";
    private static final String BULK_APP = "fleet-bulk";
    private static final int INPUT_LENGTH = 4;
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    @Spec
    CommandSpec spec;

    @Mixin
    GatewayOptions gatewayOptions = new GatewayOptions("-Xmx512m");

    @Option(names = "--gateways", defaultValue = "3", description = "Gateways in the fleet (default ${DEFAULT-VALUE}).")
    int gateways;

    @Option(names = "--replicas", defaultValue = "2", description = "Replicas of the model (default ${DEFAULT-VALUE}).")
    int replicas;

    @Option(names = "--python", defaultValue = "/usr/bin/python3", description = "Python (default ${DEFAULT-VALUE}).")
    String python;

    @Option(names = "--container", defaultValue = "bench/python_cold_container.py",
            description = "The replica's script (default ${DEFAULT-VALUE}).")
    Path container;

    @Option(names = "--redis-server", defaultValue = "redis-server", description = "(default ${DEFAULT-VALUE}).")
    String redisServer;

    @Mixin
    RateOption rate = new RateOption(700);

    @Mixin
    SloOption slo = new SloOption(50);

    @Mixin
    BatchCostOption cost = new BatchCostOption(10, 1);

    @Option(names = "--max-batch", defaultValue = "32",
            description = "Replicas' maximum batch (default ${DEFAULT-VALUE}).")
    int maxBatch;

    @Mixin
    WarmupOption warmup = new WarmupOption(60);

    @Mixin
    DurationOption duration = new DurationOption(30);

    @Option(names = "--before-kill-s", defaultValue = "10",
            description = "Failover: load before the kill (default ${DEFAULT-VALUE}).")
    int beforeKillS;

    @Option(names = "--after-kill-s", defaultValue = "20",
            description = "Failover: load after the kill (default ${DEFAULT-VALUE}).")
    int afterKillS;

    @Option(names = "--join-s", defaultValue = "20", description = "Join: load on the gateways left after the "
            + "failover before one more starts; 0 = no join phase (default ${DEFAULT-VALUE}).")
    int joinS;

    @Option(names = "--after-join-s", defaultValue = "15", description = "Join: load once the new gateway is ready, "
            + "≥ " + FleetJoinPhase.WINDOW_S + " (default ${DEFAULT-VALUE}).")
    int afterJoinS;

    @Option(names = "--bulk-s", defaultValue = "10", description = "Bulk: seconds of load after the fleet's measured "
            + "window during which requests of --bulk-rows rows go to gateways that do not own the version; 0 = no "
            + "bulk phase (default ${DEFAULT-VALUE}).")
    int bulkS;

    @Option(names = "--bulk-rows", defaultValue = "250", description = "Bulk: rows per request (default ${DEFAULT-VALUE}).")
    int bulkRows;

    @Option(names = "--bulk-slo-ms", defaultValue = "1000",
            description = "Bulk: the SLO of the app the bulk requests query (default ${DEFAULT-VALUE}).")
    double bulkSloMs;

    @Option(names = "--bulk-every-s", defaultValue = "2",
            description = "Bulk: seconds between bulk requests (default ${DEFAULT-VALUE}).")
    double bulkEveryS;

    @Option(names = "--owner-stop", defaultValue = "kill", description = "Failover: how the owner is stopped, kill "
            + "(kill -9, a crash) or term (SIGTERM, a graceful shutdown) (default ${DEFAULT-VALUE}).")
    FleetFailoverPhase.Stop ownerStop;

    @Option(names = "--feedback-rate", defaultValue = "20",
            description = "Failover: feedback/s (default ${DEFAULT-VALUE}).")
    double feedbackRate;

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
        if (joinS > 0 && afterJoinS < FleetJoinPhase.WINDOW_S) {
            throw new ParameterException(spec.commandLine(), "--after-join-s must be ≥ " + FleetJoinPhase.WINDOW_S
                    + " (the window counted after the join), got " + afterJoinS);
        }
        if (bulkS < 0 || (bulkS > 0 && (bulkRows < 1 || !(bulkSloMs > 0) || !(bulkEveryS > 0)))) {
            throw new ParameterException(spec.commandLine(), "the bulk phase needs --bulk-s ≥ 0 and, when on, "
                    + "--bulk-rows ≥ 1 and a positive --bulk-slo-ms and --bulk-every-s");
        }
        Path dir = results.create(SCENARIO);
        RunConditions atStart = RunConditions.now();
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("settings", settings());
        List<ContainerChild> containers = new ArrayList<>();
        try {
            for (int r = 0; r < replicas; r++) {
                containers.add(ContainerChild.startProgram(List.of(python, container.toString()), Map.of(
                        "MODEL_NAME", APP, "BETA_MS", Double.toString(cost.betaMs()), "ALPHA_MS", Double.toString(cost.alphaMs()),
                        "COLD_MS", "0", "MAX_BATCH_SIZE", Integer.toString(maxBatch), "WARMUP_BATCH_SIZES", ""),
                        dir.resolve("replica-" + r + ".log"), 120));
            }
            List<String> addresses = containers.stream().map(ContainerChild::address).toList();
            Map<String, Object> single = single(addresses, dir, err);
            report.put("single", single);
            try (RedisChild redis = RedisChild.start(redisServer, dir.resolve("redis.log"))) {
                fleet(redis, addresses, dir, err, single, report);
            }
        } finally {
            for (ContainerChild c : containers) {
                c.close();
            }
            report.put("conditions", RunConditions.span(atStart, RunConditions.now()));
            JSON.writeValue(dir.resolve("fleet.json").toFile(), report);
            err.printf("%s: results in %s%n", SCENARIO, dir);
        }
        return 0;
    }

    /** One gateway, its own in-memory registry, the replicas and the load. */
    private Map<String, Object> single(List<String> addresses, Path dir, PrintWriter err) throws Exception {
        GatewayProcess g = start(List.of(), dir, "single");
        try (GatewayPredictWorkload w = workload(g)) {
            ScenarioOptions.register(g.admin(), APP, slo.ms(), -1, null, addresses, "floats");
            awaitPredicting(w);
            err.printf("%s: one gateway: warm-up %.0f s, then %.0f s at %.0f/s...%n", SCENARIO, warmup.seconds,
                    duration.seconds, rate.one());
            Map<String, Object> m = measure(w, 0);
            err.printf("%s: one gateway: %.1f %% in SLO, p50 %.2f ms%n", SCENARIO, m.get("in_slo_pct"),
                    ((LatencySummary) m.get("latency")).p50Ms());
            m.put("gateway", ScenarioOptions.stop(g, dir, "single"));
            return m;
        } finally {
            if (g.isAlive()) {
                g.close();
            }
        }
    }

    private void fleet(RedisChild redis, List<String> addresses, Path dir, PrintWriter err,
            Map<String, Object> single, Map<String, Object> report) throws Exception {
        List<GatewayProcess> fleet = new ArrayList<>();
        List<GatewayPredictWorkload> loads = new ArrayList<>();
        String secret = UUID.randomUUID().toString(); // the hop's, for this run's fleet only
        try {
            for (int i = 0; i < gateways; i++) {
                fleet.add(start(member(redis, secret, "gw" + i), dir, "fleet-" + i));
                loads.add(workload(fleet.get(i)));
            }
            GatewayAdminClient admin = fleet.get(0).admin();
            ScenarioOptions.register(admin, APP, slo.ms(), -1, null, addresses, "floats");
            admin.post("add_app", Map.of("name", FEEDBACK_APP, "input_type", "floats", "default_output", "-1",
                    "latency_slo_micros", Math.round(slo.ms() * 1000), "selection_policy", "exp3"));
            admin.addModelLinks(FEEDBACK_APP, List.of(APP));
            if (bulkS > 0) {
                admin.post("add_app", Map.of("name", BULK_APP, "input_type", "floats", "default_output", "-1",
                        "latency_slo_micros", Math.round(bulkSloMs * 1000)));
                admin.addModelLinks(BULK_APP, List.of(APP));
            }
            int owner = awaitOwner(fleet);
            for (GatewayPredictWorkload w : loads) {
                awaitPredicting(w);
            }
            err.printf("%s: fleet of %d, gw%d owns the model: warm-up %.0f s, then %.0f s at %.0f/s round robin...%n",
                    SCENARIO, gateways, owner, warmup.seconds, duration.seconds, rate.one());
            RoundRobinWorkload spread = new RoundRobinWorkload(loads);
            Map<String, Object> m = measure(spread, 1);
            m.put("owner", "gw" + owner);
            Map<String, Object> p50 = new LinkedHashMap<>();
            double forwardedP50 = 0;
            double ownerP50 = Double.NaN;
            for (int i = 0; i < gateways; i++) {
                LatencySummary s = spread.predictedLatency(i);
                double p = s == null ? Double.NaN : s.p50Ms();
                p50.put("gw" + i + (i == owner ? " (owner)" : ""), p);
                if (i == owner) {
                    ownerP50 = p;
                } else {
                    forwardedP50 += p / (gateways - 1);
                }
            }
            m.put("prediction_p50_ms_by_gateway", p50);
            report.put("fleet", m);
            double ratio = (Double) m.get("in_slo_pct") / Math.max(1e-9, (Double) single.get("in_slo_pct"));
            report.put("goodput_fleet_over_single", ratio);
            report.put("forwarding_added_p50_ms", forwardedP50 - ownerP50);
            err.printf("%s: fleet: %.1f %% in SLO (%.3f of one gateway's); prediction p50 %s; forwarding adds %.2f ms%n",
                    SCENARIO, m.get("in_slo_pct"), ratio, p50, forwardedP50 - ownerP50);
            if (bulkS > 0) {
                report.put("bulk", new FleetBulkPhase(rate.one(), slo.ms(), bulkRows, bulkSloMs, bulkS, bulkEveryS,
                        seed.seed(), timeout, err).run(fleet, owner, spread, BULK_APP, INPUT_LENGTH));
            }
            report.put("failover", new FleetFailoverPhase(rate.one(), slo.ms(), beforeKillS, afterKillS, feedbackRate,
                    ownerStop, seed.seed(), timeout, err).run(fleet, loads, owner, FEEDBACK_APP, INPUT_LENGTH));
            if (joinS > 0) {
                report.put("join", new FleetJoinPhase(rate.one(), slo.ms(), joinS, afterJoinS, seed.seed(),
                        gatewayOptions.startTimeout(), timeout, err).run(fleet, loads,
                        name -> start(member(redis, secret, name), dir, "fleet-" + fleet.size()), this::workload));
            }
        } finally {
            for (GatewayPredictWorkload w : loads) {
                w.close();
            }
            List<Object> described = new ArrayList<>();
            for (int i = 0; i < fleet.size(); i++) {
                described.add(fleet.get(i).isAlive() ? ScenarioOptions.stop(fleet.get(i), dir, "fleet-" + i)
                        : Map.of("log", fleet.get(i).log().toString(), "exited", true));
            }
            report.put("fleet_gateways", described);
        }
    }

    /** Warm-up, then the measured window at {@code rate}: goodput against the SLO by the client's count. */
    private Map<String, Object> measure(Workload w, int run) throws InterruptedException {
        if (warmup.seconds > 0) {
            new OpenLoop(rate.one(), Duration.ZERO, warmup.duration(), timeout, seed.seed() + 1000 + run).run(w);
        }
        AnswerTally tally = new AnswerTally(Math.round(slo.ms() * 1e6));
        RunConditions before = RunConditions.now();
        OpenLoopResult r = new OpenLoop(rate.one(), Duration.ZERO, duration.duration(), timeout,
                seed.seed()).run(w, tally);
        AnswerTally.Counts counts = tally.counts();
        long sent = Math.max(1, r.sentInWindow());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("offered_rps", sent / r.durationS());
        m.put("in_slo_pct", 100.0 * counts.goodput() / sent);
        m.put("goodput_per_s", counts.goodput() / r.durationS());
        m.put("predictions", counts.predictions());
        m.put("defaults", counts.defaultsByExplanation());
        m.put("errors", r.errors());
        m.put("first_error", r.firstError());
        m.put("latency", r.latency());
        m.put("load_average_1m", before.loadAverage1m());
        m.put("utc", Instant.now().toString());
        return m;
    }

    private GatewayProcess start(List<String> args, Path dir, String name) throws IOException, InterruptedException {
        List<String> all = new ArrayList<>(args);
        all.add("--logging.level.root=WARN");
        all.addAll(gatewayOptions.gatewayArgs);
        GatewayProcess g = GatewayProcess.start(gatewayOptions.jar, gatewayOptions.jvmArgs, all,
                dir.resolve("gateway-" + name + ".log"));
        try {
            g.awaitLoadable(gatewayOptions.startTimeout());
            return g;
        } catch (IOException | InterruptedException | RuntimeException e) {
            g.close();
            throw e;
        }
    }

    /** The settings of fleet member {@code name}: the run's Redis, its hop secret. */
    private static List<String> member(RedisChild redis, String secret, String name) {
        return List.of("--servegate.registry.store=redis", "--servegate.registry.redis-uri=" + redis.uri(),
                "--servegate.selection.store=redis", "--servegate.fleet.advertise-host=" + GatewayProcess.HOST,
                "--servegate.fleet.name=" + name, "--servegate.fleet.secret=" + secret);
    }

    private GatewayPredictWorkload workload(GatewayProcess g) {
        return new GatewayPredictWorkload(GatewayProcess.HOST, g.port(), APP, new RandomInputs(INPUT_LENGTH),
                connections.max, timeout);
    }

    /** Waits until every gateway sees every other and all agree on the version's owner; returns its index. */
    private static int awaitOwner(List<GatewayProcess> fleet) throws Exception {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < until) {
            List<JsonNode> views = new ArrayList<>();
            for (GatewayProcess g : fleet) {
                views.add(g.admin().get("get_fleet"));
            }
            JsonNode versions = views.get(0).path("versions");
            boolean agreed = versions.size() == 1 && views.stream().allMatch(v -> v.path("members").size() == fleet.size()
                    && v.path("versions").equals(versions));
            if (agreed) {
                String owner = versions.get(0).path("owner").asText();
                for (int i = 0; i < fleet.size(); i++) {
                    if (views.get(i).path("self").asText().equals(owner)) {
                        return i;
                    }
                }
            }
            Thread.sleep(200);
        }
        throw new IOException("the fleet did not agree on an owner within 60 s");
    }

    /** Sends queries one at a time until one is predicted (the replicas are connected and profiled). */
    static void awaitPredicting(GatewayPredictWorkload w) throws Exception {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < until) {
            try {
                if (!w.send().get(10, TimeUnit.SECONDS).isDefault()) {
                    return;
                }
            } catch (ExecutionException e) {
                // not ready yet
            }
            Thread.sleep(100);
        }
        throw new IOException("no prediction within 60 s");
    }

    private Map<String, Object> settings() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("gateways", gateways);
        s.put("replicas", replicas);
        s.put("replica", container + ": a batch of b takes " + cost.betaMs() + " + " + cost.alphaMs() + "·b ms");
        s.put("rate", rate.one());
        s.put("arrivals", "Poisson");
        s.put("slo_ms", slo.ms());
        s.put("max_batch", maxBatch);
        s.put("warmup_s", warmup.seconds);
        s.put("duration_s", duration.seconds);
        s.put("before_kill_s", beforeKillS);
        s.put("after_kill_s", afterKillS);
        s.put("feedback_rate", feedbackRate);
        s.put("bulk_s", bulkS);
        s.put("bulk_rows", bulkRows);
        s.put("bulk_slo_ms", bulkSloMs);
        s.put("bulk_every_s", bulkEveryS);
        s.put("join_s", joinS);
        s.put("after_join_s", afterJoinS);
        s.put("seed", seed.seed());
        s.put("gateway_jar", gatewayOptions.jar.toString());
        s.put("gateway_jvm_args", gatewayOptions.jvmArgs);
        s.put("gateway_args", gatewayOptions.gatewayArgs);
        return s;
    }
}
