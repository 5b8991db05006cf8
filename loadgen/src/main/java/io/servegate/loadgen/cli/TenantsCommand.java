package io.servegate.loadgen.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.servegate.containers.emulated.EmulatedContainer;
import io.servegate.loadgen.harness.AppMetrics;
import io.servegate.loadgen.harness.ContainerChild;
import io.servegate.loadgen.harness.GatewayMetrics;
import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.harness.PrometheusText;
import io.servegate.loadgen.load.AnswerTally;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.loadgen.load.RandomInputs;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.loadgen.report.TenantsReport;
import io.servegate.loadgen.report.TenantsReport.AppRun;
import io.servegate.loadgen.scenario.ServingOptimum;
import io.servegate.sim.TenantMix;
import io.servegate.workload.admin.GatewayAdminClient;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * Apps of different tiers and weights sharing one model version, live: per case, a fresh emulated
 * container (a batch of b takes β + α·b ms) and a fresh gateway (its default policy unless a
 * {@code --gateway-arg} says), one model, the case's apps linked to it with their priority and
 * weight, and one Poisson stream per app at its load times the model's capacity ({@code --rate},
 * by default the analytic b·1000/ℓ(b) for the largest b with ℓ(b) ≤ SLO/2: 600/s for 10 + 1·b ms
 * and 50 ms, the simulator's {@code bin/sim tenants} case). A case below capacity also runs each
 * app alone at its load. Reports per app the client's count (in the SLO, later than SLO + 5 ms,
 * defaults) beside the gateway's (answers after the SLO, defaults by reason, shed, model time
 * from {@code servegate_model_time_seconds_total}), and checks issue #36's criteria. Performance
 * is reported, never asserted.
 */
@Command(name = "tenants", mixinStandardHelpOptions = true,
        description = "Apps with priorities and weights sharing one model version, live, beside each app alone.")
public final class TenantsCommand implements Callable<Integer> {

    static final String SCENARIO = "tenants";
    private static final String MODEL = "shared";
    /** With {@code --across-models}: each model's size and load time (all fit the container's budget). */
    private static final long MODEL_BYTES = 100L << 20;
    private static final long LOAD_MICROS = 20_000; // under the SLO: a query may wait for the load
    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /**
     * A case: its apps and whether each also runs alone.
     *
     * @param apps as {@code bin/sim tenants --apps} takes them, {@code NAME:PRIORITY[:WEIGHT]@LOAD}
     */
    record Case(String name, List<String> apps, boolean alone) {

        List<TenantMix.App> mix() {
            return apps.stream().map(TenantMix.App::parse).toList();
        }
    }

    /** The three cases of issue #36's criteria, as docs/scheduling.md simulates them. */
    static final List<Case> CASES = List.of(
            new Case("2x-tiers", List.of("critical:critical@0.5", "sheddable:sheddable@1.5"), false),
            new Case("2x-weights", List.of("w1:standard:1@1", "w3:standard:3@1"), false),
            new Case("0.7x", List.of("critical:critical@0.35", "sheddable:sheddable@0.35"), true));

    @Spec
    CommandSpec spec;

    @Mixin
    GatewayOptions gatewayOptions = new GatewayOptions();

    @Option(names = "--cases", split = ",", defaultValue = "2x-tiers,2x-weights,0.7x",
            description = "Cases among 2x-tiers, 2x-weights, 0.7x (default ${DEFAULT-VALUE}).")
    List<String> caseNames;

    @Option(names = "--apps", split = ",",
            description = "Instead of --cases, one case of these apps, NAME:PRIORITY[:WEIGHT]@LOAD (load a multiple of "
                    + "--rate), as bin/sim tenants takes them, e.g. c:critical@0.5,s:sheddable@1.5.")
    List<String> apps;

    @Option(names = "--alone", description = "With --apps: also run each app alone at its load.")
    boolean alone;

    @Option(names = "--across-models",
            description = "Each app on a model of its own, the models placed on one pool of the one emulated container "
                    + "(multi-model, all held at once), so that the pool's scheduler shares its time between them; "
                    + "--rate is what it serves of one model.")
    boolean acrossModels;

    @Mixin
    RateOption capacity = new RateOption();

    @Mixin
    SloOption slo = new SloOption(50);

    @Mixin
    BatchCostOption cost = new BatchCostOption(10, 1);

    @Option(names = "--container-jvm-arg", defaultValue = "-Xmx128m",
            description = "JVM option of the emulated container process, repeatable (default ${DEFAULT-VALUE}).")
    List<String> containerJvmArgs = new ArrayList<>();

    @Mixin
    WarmupOption warmup = new WarmupOption(30);

    @Mixin
    DurationOption duration = new DurationOption(30);

    @Mixin
    ConnectionsOption connections = new ConnectionsOption(256);

    @Mixin
    SeedOption seed;

    @Mixin
    ResultsOption results;

    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        List<Case> cases = cases();
        double rate = capacityPerSec();
        Path dir = results.create(SCENARIO);
        RunConditions atStart = RunConditions.now();
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("settings", settings(rate));
        List<Map<String, Object>> runs = new ArrayList<>();
        report.put("cases", runs);
        List<String> table = new ArrayList<>();
        try {
            for (Case c : cases) {
                runs.add(run(c, rate, dir, err, table));
            }
        } finally {
            report.put("conditions", RunConditions.span(atStart, RunConditions.now()));
            JSON.writeValue(dir.resolve("tenants.json").toFile(), report);
        }
        err.printf("%s: capacity %.0f/s, SLO %.0f ms, %.0f s measured after %.0f s warm-up%n", SCENARIO, rate, slo.ms(),
                duration.seconds, warmup.seconds);
        err.printf("%s: %s%n", SCENARIO, TenantsReport.header());
        table.forEach(l -> err.printf("%s: %s%n", SCENARIO, l));
        err.printf("%s: results in %s%n", SCENARIO, dir);
        return 0;
    }

    /** The cases to run: {@code --apps}, or those {@code --cases} names. */
    List<Case> cases() {
        try {
            if (apps != null) {
                if (spec.commandLine().getParseResult().hasMatchedOption("--cases")) {
                    throw new IllegalArgumentException("give --apps or --cases, not both");
                }
                Case c = new Case("custom", apps, alone);
                c.mix();
                return List.of(c);
            }
            List<Case> out = new ArrayList<>();
            for (String name : caseNames) {
                out.add(CASES.stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow(() ->
                        new IllegalArgumentException("unknown case '" + name + "'; the cases are "
                                + CASES.stream().map(Case::name).toList())));
            }
            return out;
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    /** The model's capacity, queries/s: {@code --rate}, or the analytic one of β, α and the SLO. */
    double capacityPerSec() {
        return capacity.given() ? capacity.one()
                : ServingOptimum.uncoordinated(1, cost.betaMs(), cost.alphaMs(), slo.ms()).perSec();
    }

    /** One case on a fresh container and gateway: the mix, then each app alone if the case says. */
    private Map<String, Object> run(Case c, double rate, Path dir, PrintWriter err, List<String> table)
            throws Exception {
        List<TenantMix.App> mix = c.mix();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("case", c.name());
        out.put("apps", c.apps());
        err.printf("%s: %s: starting the container and the gateway...%n", SCENARIO, c.name());
        List<String> containerArgs = new ArrayList<>(List.of(
                "--name", MODEL, "--version", "1", "--beta-ms", Double.toString(cost.betaMs()), "--alpha-ms",
                Double.toString(cost.alphaMs()), "--input-type", "floats", "--drain-seconds", "1"));
        if (acrossModels) {
            containerArgs.addAll(List.of("--models", Integer.toString(mix.size()), "--model-size-bytes",
                    Long.toString(MODEL_BYTES), "--memory-budget-bytes", Long.toString(mix.size() * MODEL_BYTES),
                    "--load-ms", Long.toString(LOAD_MICROS / 1000)));
        }
        try (ContainerChild container = ContainerChild.start(EmulatedContainer.class, containerJvmArgs, containerArgs,
                dir.resolve("container-" + c.name() + ".log"), 60)) {
            GatewayProcess gateway = gatewayOptions.start(dir, c.name());
            Map<String, GatewayPredictWorkload> loads = new LinkedHashMap<>();
            try {
                register(gateway.admin(), mix, container.address());
                for (TenantMix.App a : mix) {
                    loads.put(a.tenant().app(), new GatewayPredictWorkload(GatewayProcess.HOST, gateway.port(),
                            a.tenant().app(), new RandomInputs(4), connections.max, TIMEOUT));
                }
                FleetCommand.awaitPredicting(loads.values().iterator().next());
                err.printf("%s: %s: %s at %.0f/s capacity, warm-up %.0f s, then %.0f s...%n", SCENARIO, c.name(),
                        c.apps(), rate, warmup.seconds, duration.seconds);
                RunConditions before = RunConditions.now();
                List<AppRun> mixed = drive(gateway, mix, loads, rate);
                Map<String, AppRun> alone = new LinkedHashMap<>();
                if (c.alone()) {
                    for (TenantMix.App a : mix) {
                        err.printf("%s: %s: %s alone...%n", SCENARIO, c.name(), a.tenant().app());
                        alone.put(a.tenant().app(), drive(gateway, List.of(a), loads, rate).get(0));
                    }
                }
                List<Map<String, Object>> rows = new ArrayList<>();
                for (AppRun r : mixed) {
                    AppRun a = alone.get(r.app().tenant().app());
                    rows.add(TenantsReport.row(mixed, r, a));
                    table.add(TenantsReport.line(c.name(), mixed, r, a));
                }
                out.put("rows", rows);
                out.put("checks", TenantsReport.checks(mixed, alone));
                out.put("load_average_1m", before.loadAverage1m());
                out.put("load_average_at_end", RunConditions.now().loadAverage());
                out.put("utc", Instant.now().toString());
                return out;
            } finally {
                for (GatewayPredictWorkload w : loads.values()) {
                    w.close();
                }
                out.put("gateway", ScenarioOptions.stop(gateway, dir, c.name()));
            }
        }
    }

    /**
     * One model served by the container, and each app linked to it with its priority and weight;
     * with {@code --across-models}, app i linked to the container's model i, every model placed on one pool.
     */
    private void register(GatewayAdminClient admin, List<TenantMix.App> mix, String address) throws Exception {
        if (acrossModels) {
            for (int i = 0; i < mix.size(); i++) {
                Map<String, Object> body = new LinkedHashMap<>();
                body.put("pool", SCENARIO);
                body.put("model_name", MODEL + "-" + i);
                body.put("model_version", "1");
                body.put("input_type", "floats");
                body.put("addresses", List.of(address));
                body.put("memory_budget_bytes", mix.size() * MODEL_BYTES);
                body.put("model_size_bytes", MODEL_BYTES);
                body.put("load_time_micros", LOAD_MICROS);
                admin.post("deploy_model", body);
            }
            ManyModelsCommand.awaitPool(admin);
        } else {
            admin.addModel(MODEL, "1", "floats", -1, null);
        }
        for (int i = 0; i < mix.size(); i++) {
            TenantMix.App a = mix.get(i);
            Map<String, Object> app = new LinkedHashMap<>();
            app.put("name", a.tenant().app());
            app.put("input_type", "floats");
            app.put("default_output", "-1");
            app.put("latency_slo_micros", Math.round(slo.ms() * 1000));
            app.put("priority", a.tenant().priority().wireName());
            app.put("weight", a.tenant().weight());
            admin.post("add_app", app);
            admin.addModelLinks(a.tenant().app(), List.of(acrossModels ? MODEL + "-" + i : MODEL));
        }
        if (!acrossModels) {
            admin.awaitAvailable(admin.addContainer(MODEL, "1", address), Duration.ofSeconds(60));
        }
    }

    /**
     * One Poisson stream per app of {@code apps}, all at once, each at its load times {@code rate}
     * with the warm-up before; the gateway scraped at the end of the warm-up and after the last answer.
     */
    private List<AppRun> drive(GatewayProcess gateway, List<TenantMix.App> apps,
            Map<String, GatewayPredictWorkload> loads, double rate) throws Exception {
        ExecutorService drivers = Executors.newFixedThreadPool(apps.size());
        try {
            List<Future<OpenLoopResult>> results = new ArrayList<>();
            List<AnswerTally> inSlo = new ArrayList<>();
            List<AnswerTally> late = new ArrayList<>();
            for (TenantMix.App a : apps) {
                AnswerTally good = new AnswerTally(slo.nanos());
                AnswerTally slow = new AnswerTally(Math.round((slo.ms() + ColdShapesCommand.LATE_TOLERANCE_MS) * 1e6));
                inSlo.add(good);
                late.add(slow);
                // an app keeps its arrivals whether alone or in the mix: its seed is its place among the case's apps
                long appSeed = seed.seed() + loads.keySet().stream().toList().indexOf(a.tenant().app());
                OpenLoop loop = new OpenLoop(a.load() * rate, warmup.duration(), duration.duration(), TIMEOUT, appSeed);
                GatewayPredictWorkload w = loads.get(a.tenant().app());
                results.add(drivers.submit(() -> loop.run(w, (answer, nanos) -> {
                    good.accept(answer, nanos);
                    slow.accept(answer, nanos);
                })));
            }
            Thread.sleep(warmup.duration().toMillis());
            PrometheusText before = PrometheusText.parse(GatewayMetrics.scrapeText(gateway));
            List<OpenLoopResult> done = new ArrayList<>();
            for (Future<OpenLoopResult> f : results) {
                done.add(f.get());
            }
            String afterText = GatewayMetrics.scrapeText(gateway);
            PrometheusText after = PrometheusText.parse(afterText);
            boolean scraped = afterText != null && !before.samples().isEmpty();
            List<AppRun> out = new ArrayList<>();
            for (int i = 0; i < apps.size(); i++) {
                String name = apps.get(i).tenant().app();
                AnswerTally.Counts counts = inSlo.get(i).counts();
                OpenLoopResult r = done.get(i);
                out.add(new AppRun(apps.get(i), r.durationS(), r.scheduled(), counts.predictions(), counts.goodput(),
                        late.get(i).counts().late(), counts.defaultsByExplanation(), r.errors() + r.unanswered(),
                        scraped ? AppMetrics.of(after, name).minus(AppMetrics.of(before, name)) : null));
            }
            return out;
        } finally {
            drivers.shutdownNow();
        }
    }

    private Map<String, Object> settings(double rate) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("capacity_per_s", rate);
        s.put("capacity_from", capacity.given() ? "--rate" : "b·1000/(β + α·b), the largest b with β + α·b ≤ SLO/2");
        s.put("container", "emulated, one replica, a batch of b takes " + cost.betaMs() + " + " + cost.alphaMs() + "·b ms, JVM "
                + containerJvmArgs);
        s.put("across_models", acrossModels);
        s.put("slo_ms", slo.ms());
        s.put("arrivals", "Poisson, one stream per app");
        s.put("warmup_s", warmup.seconds);
        s.put("duration_s", duration.seconds);
        s.put("late_client", "answers later than SLO + " + ColdShapesCommand.LATE_TOLERANCE_MS + " ms");
        s.put("seed", seed.seed());
        s.put("gateway_jar", gatewayOptions.jar.toString());
        s.put("gateway_jvm_args", gatewayOptions.jvmArgs);
        s.put("gateway_args", gatewayOptions.gatewayArgs);
        return s;
    }
}
