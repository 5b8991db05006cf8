package io.servegate.loadgen.cli;

import io.servegate.containers.emulated.EmulatedContainer;
import io.servegate.loadgen.harness.ContainerChild;
import io.servegate.loadgen.harness.GatewayMetrics;
import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.load.AnswerTally;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.loadgen.load.RandomInputs;
import io.servegate.loadgen.load.TimerJitter;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.loadgen.report.SchedulingFindings;
import io.servegate.loadgen.report.SchedulingReport;
import io.servegate.loadgen.scenario.ServingOptimum;
import io.servegate.workload.admin.GatewayAdminClient;
import io.servegate.workload.arrival.ArrivalPattern;
import io.servegate.workload.report.HtmlReport;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The gateway's scheduling policies side by side in one run: for each policy a gateway child
 * started with {@code --servegate.scheduling.policy=<policy>}, and in it one app and model per
 * load case, served by emulated containers (a batch of b sleeps β + α·b ms), each a process of its
 * own and shared by the policies' gateways. Each case is open-loop load at a fixed rate, measured
 * against the analytic optimum at that rate ({@link ServingOptimum#atRate}); answers later than
 * SLO + 2 ms are compared with a bare timer thread's late wake-ups in the same window
 * ({@link TimerJitter}). Performance is reported, never asserted.
 */
@Command(name = "scheduling", mixinStandardHelpOptions = true,
        description = "Goodput of the clipper, clockwork and symphony scheduling policies side by side: one replica "
                + "at 0.8x, 2x and 4x capacity, 8 replicas (Symphony Table 4, ResNet50), Gamma arrivals; late answers "
                + "against a bare-timer control.")
public final class SchedulingCommand implements Callable<Integer> {

    static final String SCENARIO = "scheduling";

    /** Answers later than SLO + this count as late, against timer wake-ups later than this. */
    static final double LATE_TOLERANCE_MS = 2;

    /** Symphony's Table 4, ResNet50 row: replicas, β, α, SLO. */
    public static final int TABLE4_REPLICAS = 8;
    public static final double TABLE4_BETA_MS = 5.072;
    public static final double TABLE4_ALPHA_MS = 1.053;
    public static final double TABLE4_SLO_MS = 25;

    /** The gateway's scheduling policies. */
    public enum Policy { clipper, clockwork, symphony, adaptive }

    /**
     * One load case: an app and model of its name, on replicas emulated as β + α·b, at an offered rate.
     *
     * @param name the case's name, also its app's and model's
     * @param description what it is, for the report
     * @param targetOfOptimum the goodput, as a share of the optimum, that issue 12 asks for; null if none
     */
    public record Case(String name, String description, int replicas, double betaMs, double alphaMs, double sloMs,
            double ratePerSec, ArrivalPattern arrivals, Double targetOfOptimum) {

        public ServingOptimum.Point optimum() {
            return ServingOptimum.atRate(replicas, betaMs, alphaMs, sloMs, ratePerSec);
        }
    }

    @Spec
    CommandSpec spec;

    @Mixin
    GatewayOptions gatewayOptions;

    @Option(names = "--policies", split = ",", defaultValue = "clipper,clockwork,symphony",
            description = "Policies, one gateway each, in this order (default ${DEFAULT-VALUE}).")
    List<Policy> policies;

    @Option(names = "--cases", split = ",", defaultValue = "r1-0.8x,r1-2x,r1-4x,r8-table4,r1-gamma",
            description = "Load cases, in this order: r1-0.8x, r1-2x, r1-4x (one replica at 0.8, 2 and 4 times its "
                    + "analytic capacity), r8-table4 (8 replicas of Symphony's Table 4 ResNet50 row at their staggered "
                    + "optimum), r1-gamma (one replica at 0.8x, Gamma arrivals) (default ${DEFAULT-VALUE}).")
    List<String> caseNames;

    @Mixin
    DurationOption duration = new DurationOption(20);

    @Mixin
    WarmupOption warmup = new WarmupOption(5);

    @Option(names = "--jvm-warmup-s", defaultValue = "30",
            description = "Unmeasured seconds once per gateway, split evenly over the cases' loads, so that its JIT "
                    + "has compiled the paths measured (default ${DEFAULT-VALUE}).")
    double jvmWarmupS;

    @Mixin
    BatchCostOption cost = new BatchCostOption(5, 0.5);

    @Mixin
    SloOption slo;

    @Option(names = "--cv2", defaultValue = "4",
            description = "CV² of the gaps of the r1-gamma case (default ${DEFAULT-VALUE}).")
    double gammaCv2;

    @Option(names = "--timer-control", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Run a bare timer thread in a JVM of its own during each measured window, and compare "
                    + "answers later than SLO + 2 ms with its wake-ups later than 2 ms (default ${DEFAULT-VALUE}).")
    boolean timerControl;

    @Option(names = "--container-jvm-arg", defaultValue = "-Xmx128m",
            description = "JVM option of each emulated container process, repeatable (default ${DEFAULT-VALUE}).")
    List<String> containerJvmArgs = new ArrayList<>();

    @Option(names = "--input-length", defaultValue = "8",
            description = "Floats per input, random and distinct per request (default ${DEFAULT-VALUE}).")
    int inputLength;

    @Mixin
    ConnectionsOption connections = new ConnectionsOption(512);

    @Mixin
    TimeoutOption requestTimeout = new TimeoutOption(5000);

    @Mixin
    SeedOption seed;

    @Mixin
    ResultsOption results;

    /**
     * The cases, in issue 12's order, for one-replica cases of (β, α, SLO): their capacity is the
     * uncoordinated optimum (1,000/s for β 5, α 0.5, SLO 20); the 8-replica case is offered its
     * staggered optimum (5,839/s).
     */
    static List<Case> cases(double betaMs, double alphaMs, double sloMs, double gammaCv2) {
        double capacity = ServingOptimum.uncoordinated(1, betaMs, alphaMs, sloMs).perSec();
        double table4 = Math.round(ServingOptimum.staggered(TABLE4_REPLICAS, TABLE4_BETA_MS, TABLE4_ALPHA_MS,
                TABLE4_SLO_MS).perSec());
        return List.of(
                new Case("r1-0.8x", "1 replica, 0.8x capacity", 1, betaMs, alphaMs, sloMs, 0.8 * capacity,
                        ArrivalPattern.poisson(), 0.9),
                new Case("r1-2x", "1 replica, 2x capacity", 1, betaMs, alphaMs, sloMs, 2 * capacity,
                        ArrivalPattern.poisson(), 0.85),
                new Case("r1-4x", "1 replica, 4x capacity", 1, betaMs, alphaMs, sloMs, 4 * capacity,
                        ArrivalPattern.poisson(), 0.85),
                new Case("r8-table4", "8 replicas, Symphony Table 4 ResNet50 row, at its staggered optimum",
                        TABLE4_REPLICAS, TABLE4_BETA_MS, TABLE4_ALPHA_MS, TABLE4_SLO_MS, table4, ArrivalPattern.poisson(),
                        0.8),
                new Case("r1-gamma", "1 replica, 0.8x capacity, Gamma arrivals (CV² " + gammaCv2 + ")", 1, betaMs,
                        alphaMs, sloMs, 0.8 * capacity, ArrivalPattern.gamma(gammaCv2), null));
    }

    @Override
    public Integer call() throws Exception {
        List<Case> selected = validate();
        PrintWriter err = spec.commandLine().getErr();
        Instant startedAt = Instant.now();
        RunConditions atStart = RunConditions.now();
        Path dir = results.create(SCENARIO);
        List<SchedulingReport.Run> runs = new ArrayList<>();
        List<Map<String, Object>> gateways = new ArrayList<>();
        Map<String, List<ContainerChild>> replicas = new LinkedHashMap<>();
        try {
            for (Case c : selected) {
                replicas.put(c.name(), startReplicas(c, dir, err));
            }
            List<ContainerChild> all = replicas.values().stream().flatMap(List::stream).toList();
            for (Policy p : policies) {
                runPolicy(p, selected, replicas, all, dir, runs, gateways, err);
            }
        } finally {
            for (List<ContainerChild> l : replicas.values()) {
                for (ContainerChild c : l) {
                    c.close();
                }
            }
        }

        SchedulingReport report = new SchedulingReport(SCENARIO, startedAt.toString(), settings(),
                ScenarioOptions.environment(atStart), gateways, runs, SchedulingReport.symphonyTable4(),
                SchedulingFindings.of(runs, Runtime.getRuntime().availableProcessors()));
        Path html = report.write(dir);
        PrintWriter stdout = spec.commandLine().getOut();
        stdout.print(report.table());
        stdout.println("wrote " + html);
        for (Map<String, Object> g : gateways) {
            if (g.get("logProblemLines") instanceof Number n && n.longValue() > 0) {
                err.printf("%s: the %s gateway's log has %d ERROR/WARN/exception lines; see %s%n", SCENARIO,
                        g.get("policy"), n.longValue(), g.get("log"));
            }
        }
        return runs.stream().allMatch(r -> r.measurement().answeredPerSec() > 0) ? 0 : 1;
    }

    private List<Case> validate() {
        CommandLine cl = spec.commandLine();
        if (!(duration.seconds > 0) || !(warmup.seconds >= 0) || !(jvmWarmupS >= 0) || !(cost.betaMs() >= 0) || !(cost.alphaMs() > 0)
                || inputLength < 1 || connections.max < 1 || requestTimeout.ms < 1) {
            throw new CommandLine.ParameterException(cl, "need --duration-s > 0, --warmup-s and --jvm-warmup-s ≥ 0, "
                    + "--beta-ms ≥ 0, --alpha-ms > 0 and positive --input-length, --max-connections and --timeout-ms");
        }
        if (!(ServingOptimum.uncoordinated(1, cost.betaMs(), cost.alphaMs(), slo.ms()).batchSize() > 0)) {
            throw new CommandLine.ParameterException(cl, "--slo-ms must hold two batches of one: SLO ≥ 2·(β + α)");
        }
        if (policies.isEmpty() || new LinkedHashSet<>(policies).size() != policies.size()) {
            throw new CommandLine.ParameterException(cl, "--policies must name each policy at most once");
        }
        List<Case> catalogue;
        try {
            catalogue = cases(cost.betaMs(), cost.alphaMs(), slo.ms(), gammaCv2);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cl, e.getMessage());
        }
        List<Case> selected = new ArrayList<>();
        for (String name : caseNames) {
            Case c = catalogue.stream().filter(k -> k.name().equals(name)).findFirst().orElseThrow(() ->
                    new CommandLine.ParameterException(cl, "unknown case '" + name + "'; the cases are "
                            + catalogue.stream().map(Case::name).toList()));
            if (selected.stream().anyMatch(k -> k.name().equals(name))) {
                throw new CommandLine.ParameterException(cl, "--cases names '" + name + "' twice");
            }
            selected.add(c);
        }
        if (selected.isEmpty()) {
            throw new CommandLine.ParameterException(cl, "--cases must name at least one case");
        }
        return selected;
    }

    /** The case's emulated replicas, each a process of its own, serving model {@code <case>:1}. */
    private List<ContainerChild> startReplicas(Case c, Path dir, PrintWriter err) throws Exception {
        err.printf("%s: starting %d emulated container(s) for %s (beta %.3f ms, alpha %.3f ms)...%n", SCENARIO,
                c.replicas(), c.name(), c.betaMs(), c.alphaMs());
        List<ContainerChild> started = new ArrayList<>();
        try {
            for (int i = 0; i < c.replicas(); i++) {
                started.add(ContainerChild.start(EmulatedContainer.class, containerJvmArgs, List.of("--name",
                        c.name(), "--version", "1", "--beta-ms", Double.toString(c.betaMs()), "--alpha-ms",
                        Double.toString(c.alphaMs()), "--input-type", "floats", "--drain-seconds", "1"),
                        dir.resolve("container-" + c.name() + "-" + i + ".log"), 60));
            }
            return started;
        } catch (Exception e) {
            for (ContainerChild s : started) {
                s.close();
            }
            throw e;
        }
    }

    /** One gateway with this policy: every case registered, the JVM warm-up, then each case measured. */
    private void runPolicy(Policy policy, List<Case> cases, Map<String, List<ContainerChild>> replicas,
            List<ContainerChild> allContainers, Path dir, List<SchedulingReport.Run> runs,
            List<Map<String, Object>> gateways, PrintWriter err) throws Exception {
        String name = SCENARIO + "-" + policy;
        err.printf("%s: starting the %s gateway...%n", SCENARIO, policy);
        GatewayProcess gateway = gatewayOptions.start(dir, name, List.of("--servegate.scheduling.policy=" + policy));
        Map<String, GatewayPredictWorkload> loads = new LinkedHashMap<>();
        try {
            GatewayAdminClient admin = gateway.admin();
            Duration timeout = requestTimeout.duration();
            for (Case c : cases) {
                // the per-model field names the same policy as the gateway-wide default: either way it applies
                ScenarioOptions.register(admin, c.name(), c.sloMs(), -1, policy.name(),
                        replicas.get(c.name()).stream().map(ContainerChild::address).toList(), "floats");
                loads.put(c.name(), new GatewayPredictWorkload(GatewayProcess.HOST, gateway.port(), c.name(),
                        new RandomInputs(inputLength), connections.max, timeout));
            }
            if (jvmWarmupS > 0) {
                err.printf("%s: %s: JVM warm-up, %.1f s over the cases' loads...%n", SCENARIO, policy, jvmWarmupS);
                for (int i = 0; i < cases.size(); i++) {
                    Case c = cases.get(i);
                    new OpenLoop(c.ratePerSec(), c.arrivals(), Duration.ZERO,
                            GatewayOverheadCommand.seconds(jvmWarmupS / cases.size()), timeout, seed.seed() + 2000 + i)
                            .run(loads.get(c.name()));
                }
            }
            for (int i = 0; i < cases.size(); i++) {
                Case c = cases.get(i);
                runs.add(measure(policy, c, i, gateway, loads.get(c.name()), allContainers, err));
            }
        } finally {
            loads.values().forEach(GatewayPredictWorkload::close);
            Map<String, Object> info = new LinkedHashMap<>();
            info.put("policy", policy.name());
            info.putAll(ScenarioOptions.stop(gateway, dir, name));
            gateways.add(info);
        }
    }

    /** The case's warm-up, then its measured window with the timer control beside it. */
    private SchedulingReport.Run measure(Policy policy, Case c, int index, GatewayProcess gateway,
            GatewayPredictWorkload load, List<ContainerChild> containers, PrintWriter err) throws Exception {
        Duration timeout = requestTimeout.duration();
        if (warmup.seconds > 0) {
            new OpenLoop(c.ratePerSec(), c.arrivals(), Duration.ZERO, warmup.duration(),
                    timeout, seed.seed() + 1000 + index).run(load);
        }
        err.printf("%s: %s, %s: open loop %.0f req/s (%s), %.1f s...%n", SCENARIO, policy, c.name(), c.ratePerSec(),
                c.arrivals().describe(), duration.seconds);
        AnswerTally tally = new AnswerTally(Math.round(c.sloMs() * 1e6));
        AnswerTally lateTally = new AnswerTally(Math.round((c.sloMs() + LATE_TOLERANCE_MS) * 1e6));
        SchedulingReport.CpuReading cpuBefore = SchedulingReport.CpuReading.now(containers);
        String before = GatewayMetrics.scrapeText(gateway);
        TimerJitter.Child control = timerControl
                ? TimerJitter.Child.start(duration.duration()) : null;
        OpenLoopResult result = new OpenLoop(c.ratePerSec(), c.arrivals(), Duration.ZERO,
                duration.duration(), timeout, seed.seed() + index).run(load, (answer, nanos) -> {
                    tally.accept(answer, nanos);
                    lateTally.accept(answer, nanos);
                });
        // both tallies read together: answers that straggle in after the drain time count in neither
        AnswerTally.Counts counts = tally.counts();
        AnswerTally.Counts lateCounts = lateTally.counts();
        String after = GatewayMetrics.scrapeText(gateway);
        SchedulingReport.CpuReading cpuAfter = SchedulingReport.CpuReading.now(containers);
        TimerJitter.Result floor = control == null ? null : control.await(Duration.ofSeconds(30));
        SchedulingReport.Run run = SchedulingReport.Run.of(policy.name(), c, result, counts, lateCounts, floor,
                before, after, cpuBefore, cpuAfter);
        err.printf("%s:   goodput %.1f/s of optimum %.0f/s (%s), p99 %s ms, late/control %s%n", SCENARIO,
                run.measurement().goodputPerSec(), run.optimumPerSec(), HtmlReport.format(run.goodputOfOptimum()),
                HtmlReport.format(run.measurement().p99Ms()), HtmlReport.format(run.lateVsControl()));
        if (result.firstError() != null) {
            err.printf("%s:   %d errors, first: %s%n", SCENARIO, result.errors(), result.firstError());
        }
        return run;
    }

    private Map<String, Object> settings() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("policies", policies.stream().map(Policy::name).toList());
        s.put("cases", caseNames);
        s.put("oneReplica", "beta " + cost.betaMs() + " ms, alpha " + cost.alphaMs() + " ms, SLO " + slo.ms() + " ms");
        s.put("eightReplicas", "beta " + TABLE4_BETA_MS + " ms, alpha " + TABLE4_ALPHA_MS + " ms, SLO "
                + TABLE4_SLO_MS + " ms (Symphony Table 4, ResNet50)");
        s.put("gammaCv2", gammaCv2);
        s.put("durationS", duration.seconds);
        s.put("warmupS", warmup.seconds);
        s.put("jvmWarmupS", jvmWarmupS);
        s.put("lateToleranceMs", LATE_TOLERANCE_MS);
        s.put("timerControl", timerControl);
        s.put("batchSize", "-1 (the policy chooses)");
        s.put("containers", "emulated, one process per replica, sleeping beta + alpha*b ms per batch, JVM "
                + containerJvmArgs);
        s.put("inputLength", inputLength);
        s.put("inputs", "random, distinct per request");
        s.put("target", "Clipper POST /{app}/predict");
        s.put("maxConnections", connections.max);
        s.put("timeoutMs", requestTimeout.ms);
        s.put("seed", seed.seed());
        s.put("gatewayJar", gatewayOptions.jar.toString());
        s.put("gatewayJvmArgs", gatewayOptions.jvmArgs);
        s.put("gatewayArgs", gatewayOptions.gatewayArgs);
        return s;
    }
}
