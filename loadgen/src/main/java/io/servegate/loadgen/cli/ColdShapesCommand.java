package io.servegate.loadgen.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.servegate.loadgen.harness.GatewayMetrics;
import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.load.AnswerTally;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.loadgen.load.RandomInputs;
import io.servegate.loadgen.report.RunConditions;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * Gateways side by side on a Python SDK container with the pathologies of real accelerators
 * (bench/python_cold_container.py): for each gateway jar and each case, a fresh container and a
 * fresh gateway (default policy), Poisson arrivals at a fixed rate, a warm-up, then a measured
 * window: predictions within the SLO and answers later than SLO + 5 ms by the client's count, and
 * answers after the SLO by the gateway's own ({@code servegate_answers_late_total}).
 * Cases: {@code control} (none of them), {@code cold} (the first batch of each size is slow and the
 * SDK warms up only a batch of one, so the gateway meets every other size cold), {@code cold-warmed}
 * (the SDK warms every size up to the maximum batch before ready), {@code stalls} (the container
 * stands still now and then) and {@code cpu-hog} (the control, with {@code stress-ng --cpu N} at the
 * same priority beside the gateway throughout); pathologies join with {@code +}, as in
 * {@code stalls+cpu-hog}. Performance is reported, never asserted.
 */
@Command(name = "cold-shapes", mixinStandardHelpOptions = true,
        description = "Goodput of gateways side by side on a container with cold shapes, stalls, or a CPU hog beside.")
public final class ColdShapesCommand implements Callable<Integer> {

    static final String SCENARIO = "cold-shapes";
    static final double LATE_TOLERANCE_MS = 5;
    static final String CONTROL = "control";
    static final List<String> PATHOLOGIES = List.of("cold", "cold-warmed", "stalls", "cpu-hog");

    @Spec
    CommandSpec spec;

    @Option(names = "--compare", required = true, description = "LABEL=JAR, repeatable: the gateway builds to compare.")
    List<String> gateways;

    @Option(names = "--cases", split = ",", defaultValue = "control,cold,cold-warmed",
            description = "control, or cold, cold-warmed, stalls, cpu-hog, several joined by + "
                    + "(stalls+cpu-hog) (default ${DEFAULT-VALUE}).")
    List<String> cases;

    @Option(names = "--python", defaultValue = "/usr/bin/python3", description = "Python (default ${DEFAULT-VALUE}).")
    String python;

    @Option(names = "--container", defaultValue = "bench/python_cold_container.py",
            description = "The container: a Python SDK script, or the emulated container's jar, which takes the same "
                    + "settings (default ${DEFAULT-VALUE}).")
    Path container;

    @Mixin
    RateOption rate = new RateOption(400);

    @Mixin
    SloOption slo = new SloOption(50);

    @Mixin
    BatchCostOption cost = new BatchCostOption(10, 1);

    @Option(names = "--cold-ms", defaultValue = "300",
            description = "Extra cost of the first batch of each size (default ${DEFAULT-VALUE}).")
    double coldMs;

    @Option(names = "--stall-ms", defaultValue = "200",
            description = "Case stalls: how long each stall lasts (default ${DEFAULT-VALUE}).")
    double stallMs;

    @Option(names = "--stall-every-ms", defaultValue = "5000",
            description = "Case stalls: one stall this often (default ${DEFAULT-VALUE}).")
    double stallEveryMs;

    @Option(names = "--hog-cpus", defaultValue = "2",
            description = "Case cpu-hog: stress-ng --cpu this many (default ${DEFAULT-VALUE}).")
    int hogCpus;

    @Option(names = "--max-batch", defaultValue = "32",
            description = "The container's declared maximum batch (default ${DEFAULT-VALUE}).")
    int maxBatch;

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
        Path dir = results.create(SCENARIO);
        List<Map<String, Object>> runs = new ArrayList<>();
        RunConditions atStart = RunConditions.now();
        for (String c : cases) {
            if (!c.equals(CONTROL) && !PATHOLOGIES.containsAll(List.of(c.split("\\+", -1)))) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "a case is " + CONTROL
                        + " or among " + PATHOLOGIES + " joined by +, got " + c);
            }
            if (has(c, "cold") && has(c, "cold-warmed")) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                        "cold (the SDK warms a batch of one) and cold-warmed (every size) exclude each other: " + c);
            }
        }
        Map<String, Integer> times = new HashMap<>();
        for (String c : cases) {
            int time = times.merge(c, 1, Integer::sum); // a case named again keeps the files of each run
            for (String g : gateways) {
                int eq = g.indexOf('=');
                if (eq <= 0) {
                    throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                            "--compare wants LABEL=JAR, got " + g);
                }
                String label = g.substring(0, eq);
                runs.add(run(label, Path.of(g.substring(eq + 1)), c, c + "-" + label + (time > 1 ? "-" + time : ""),
                        dir, err));
            }
        }
        Map<String, Object> report = new LinkedHashMap<>();
        Map<String, Object> settings = new LinkedHashMap<>(Map.of("rate", rate.one(), "slo_ms", slo.ms(), "beta_ms", cost.betaMs(),
                "alpha_ms", cost.alphaMs(), "cold_ms", coldMs, "max_batch", maxBatch, "warmup_s", warmup.seconds,
                "duration_s", duration.seconds, "seed", seed.seed()));
        settings.putAll(Map.of("stall_ms", stallMs, "stall_every_ms", stallEveryMs, "hog_cpus", hogCpus));
        report.put("settings", settings);
        report.put("conditions", RunConditions.span(atStart, RunConditions.now()));
        report.put("runs", runs);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(dir.resolve("cold-shapes.json").toFile(),
                report);
        err.printf("%s: %-12s %-10s %8s %10s %10s %12s %8s%n", SCENARIO, "case", "gateway", "offered", "in SLO",
                "late+5ms", "gateway late", "load1m");
        for (Map<String, Object> r : runs) {
            err.printf("%s: %-12s %-10s %8.1f %9.1f%% %9.2f%% %11s%% %8.2f%n", SCENARIO, r.get("case"), r.get("gateway"),
                    r.get("offered_rps"), r.get("in_slo_pct"), r.get("late_pct"), r.get("gateway_late_pct"),
                    r.get("load_average_1m"));
        }
        err.printf("%s: results in %s%n", SCENARIO, dir);
        return 0;
    }

    private Map<String, Object> run(String label, Path jar, String c, String name, Path dir, PrintWriter err)
            throws Exception {
        Process containerProcess = startContainer(c, dir.resolve("container-" + name + ".log"));
        GatewayProcess gateway = null;
        Process hog = null;
        try {
            int port = awaitPort(containerProcess, dir.resolve("container-" + name + ".log"));
            gateway = GatewayProcess.start(jar, List.of("-Xmx1g"), List.of(), dir.resolve("gateway-" + name + ".log"));
            gateway.awaitLoadable(Duration.ofSeconds(120));
            ScenarioOptions.register(gateway.admin(), "cold", slo.ms(), -1, null,
                    List.of(GatewayProcess.HOST + ":" + port), "floats");
            Duration timeout = Duration.ofSeconds(5);
            try (GatewayPredictWorkload load = new GatewayPredictWorkload(GatewayProcess.HOST, gateway.port(), "cold",
                    new RandomInputs(4), connections.max, timeout)) {
                if (has(c, "cpu-hog")) {
                    hog = new ProcessBuilder("stress-ng", "--cpu", Integer.toString(hogCpus)).redirectErrorStream(true)
                            .redirectOutput(dir.resolve("stress-ng-" + name + ".log").toFile()).start();
                }
                err.printf("%s: %s on %s: warm-up %.0f s at %.0f/s...%n", SCENARIO, c, label, warmup.seconds,
                        rate.one());
                if (warmup.seconds > 0) {
                    new OpenLoop(rate.one(), Duration.ZERO, warmup.duration(), timeout, seed.seed() + 1000)
                            .run(load);
                }
                AnswerTally inSlo = new AnswerTally(Math.round(slo.ms() * 1e6));
                AnswerTally late = new AnswerTally(Math.round((slo.ms() + LATE_TOLERANCE_MS) * 1e6));
                RunConditions before = RunConditions.now();
                GatewayMetrics gatewayBefore = GatewayMetrics.scrape(gateway);
                OpenLoopResult result = new OpenLoop(rate.one(), Duration.ZERO, duration.duration(),
                        timeout, seed.seed()).run(load, (answer, nanos) -> {
                            inSlo.accept(answer, nanos);
                            late.accept(answer, nanos);
                        });
                GatewayMetrics gatewayAfter = GatewayMetrics.scrape(gateway);
                AnswerTally.Counts counts = inSlo.counts();
                long answered = counts.predictions() + counts.defaults();
                long sent = Math.max(1, result.sentInWindow());
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("case", c);
                r.put("gateway", label);
                r.put("offered_rps", sent / result.durationS());
                r.put("in_slo_pct", 100.0 * counts.goodput() / sent);
                r.put("late_pct", 100.0 * late.counts().late() / Math.max(1, answered));
                if (gatewayBefore != null && gatewayAfter != null) {
                    GatewayMetrics own = gatewayAfter.minus(gatewayBefore);
                    r.put("gateway_answers", own.requests());
                    r.put("gateway_late_pct", String.format(java.util.Locale.ROOT, "%.2f",
                            100.0 * own.lateAnswers() / Math.max(1, own.requests())));
                }
                r.put("predictions", counts.predictions());
                r.put("defaults", counts.defaultsByExplanation());
                r.put("errors", result.errors());
                r.put("load_average_1m", before.loadAverage1m());
                err.printf("%s: %s on %s: %.1f %% in SLO, %.2f %% later than SLO + %.0f ms, gateway's count %s %% after the "
                        + "SLO%n", SCENARIO, c, label, r.get("in_slo_pct"), r.get("late_pct"), LATE_TOLERANCE_MS,
                        r.get("gateway_late_pct"));
                return r;
            }
        } finally {
            if (hog != null) {
                hog.destroy();
                if (!hog.waitFor(10, TimeUnit.SECONDS)) {
                    hog.destroyForcibly();
                }
            }
            if (gateway != null) {
                ScenarioOptions.stop(gateway, dir, name);
            }
            containerProcess.destroy();
            if (!containerProcess.waitFor(10, TimeUnit.SECONDS)) {
                containerProcess.destroyForcibly();
            }
        }
    }

    private Process startContainer(String c, Path log) throws IOException {
        List<String> command = container.toString().endsWith(".jar")
                ? List.of(ProcessHandle.current().info().command().orElse("java"), "-jar", container.toString())
                : List.of(python, container.toString());
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        Map<String, String> env = pb.environment();
        env.put("MODEL_NAME", "cold");
        env.put("PORT", "0");
        env.put("HOST", GatewayProcess.HOST);
        env.put("BETA_MS", Double.toString(cost.betaMs()));
        env.put("ALPHA_MS", Double.toString(cost.alphaMs()));
        boolean cold = has(c, "cold") || has(c, "cold-warmed");
        env.put("COLD_MS", cold ? Double.toString(coldMs) : "0");
        env.put("COLD_BATCH_MS", env.get("COLD_MS")); // the emulated container's name for it
        env.put("STALL_MS", has(c, "stalls") ? Double.toString(stallMs) : "0");
        env.put("STALL_EVERY_MS", Double.toString(stallEveryMs));
        env.put("MAX_BATCH_SIZE", Integer.toString(maxBatch));
        env.put("WARMUP_BATCH_SIZES", has(c, "cold") ? "1" : ""); // empty: every size up to the maximum
        return pb.start();
    }

    /** Whether case {@code c} (pathologies joined by +) has {@code pathology}. */
    static boolean has(String c, String pathology) {
        return List.of(c.split("\\+")).contains(pathology);
    }

    /** Waits for the SDK's {@code READY port=N} line in the container's log. */
    private static int awaitPort(Process p, Path log) throws IOException, InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < until) {
            if (Files.exists(log)) {
                for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
                    if (line.startsWith("READY port=")) {
                        return Integer.parseInt(line.substring("READY port=".length()).trim());
                    }
                }
            }
            if (!p.isAlive()) {
                throw new IOException("the container exited before it was ready; see " + log);
            }
            Thread.sleep(100);
        }
        throw new IOException("the container did not print READY port=N within 120 s; see " + log);
    }
}
