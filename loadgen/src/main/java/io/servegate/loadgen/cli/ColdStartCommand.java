package io.servegate.loadgen.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.servegate.containers.noop.NoopContainer;
import io.servegate.loadgen.harness.GatewayMetrics;
import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.harness.PrometheusText;
import io.servegate.loadgen.load.AnswerTally;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.loadgen.load.RandomInputs;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * A gateway's first seconds: for each case (JVM options and gateway settings), a fresh gateway
 * process is started, the no-op model (a container in this JVM, warm) registered, and from the
 * moment {@code /v2/health/ready} answers 200 it gets Poisson load at a fixed rate for two
 * windows. Reported per window: the share of queries answered in the SLO by the client's count,
 * and by the gateway's own (its answers that were neither late nor a default), beside the time
 * from the process's start to ready. A priming run first warms this JVM's client and container,
 * so that every case meets the same client. Performance is reported, never asserted.
 */
@Command(name = "cold-start", mixinStandardHelpOptions = true,
        description = "A cold gateway loaded from the moment it reports ready: first seconds in SLO, start-to-ready.")
public final class ColdStartCommand implements Callable<Integer> {

    static final String SCENARIO = "cold-start";
    private static final String APP = "noop";

    @Spec
    CommandSpec spec;

    @Mixin
    GatewayOptions gatewayOptions;

    @Option(names = "--case", required = true,
            description = "LABEL=ARGS, repeatable: ARGS space-separated, those starting with -X or -D for the JVM, "
                    + "the others (--name=value) for the gateway; e.g. off=--servegate.warmup.enabled=false")
    List<String> cases;

    @Mixin
    RateOption rate = new RateOption(800);

    @Mixin
    SloOption slo;

    @Mixin
    DurationOption duration = new DurationOption(5);

    @Mixin
    ConnectionsOption connections = new ConnectionsOption(256);

    @Mixin
    SeedOption seed;

    @Mixin
    ResultsOption results;

    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        Map<String, List<String>> parsed = new LinkedHashMap<>();
        for (String c : cases) {
            int eq = c.indexOf('=');
            if (eq <= 0) {
                throw new ParameterException(spec.commandLine(), "--case wants LABEL=ARGS, got " + c);
            }
            parsed.put(c.substring(0, eq), Arrays.stream(c.substring(eq + 1).trim().split("\\s+"))
                    .filter(a -> !a.isEmpty()).toList());
        }
        Path dir = results.create(SCENARIO);
        RunConditions atStart = RunConditions.now();
        List<Map<String, Object>> runs = new ArrayList<>();
        try (ModelContainer<float[], String> noop = NoopContainer.builder(TensorType.FLOATS).name(APP)
                .host(GatewayProcess.HOST).port(0).build().start()) {
            String address = GatewayProcess.HOST + ":" + noop.port();
            err.printf("%s: priming this JVM's client and container...%n", SCENARIO);
            run("prime", List.of(), address, dir, err);
            for (Map.Entry<String, List<String>> c : parsed.entrySet()) {
                runs.add(run(c.getKey(), c.getValue(), address, dir, err));
            }
        }
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("settings", Map.of("rate", rate.one(), "slo_ms", slo.ms(), "window_s", duration.seconds,
                "seed", seed.seed(), "cases", parsed));
        report.put("conditions", RunConditions.span(atStart, RunConditions.now()));
        report.put("runs", runs);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
                .writeValue(dir.resolve(SCENARIO + ".json").toFile(), report);
        err.printf("%s: %-14s %9s %14s %14s %14s %14s %7s%n", SCENARIO, "case", "ready s", "0-5s client",
                "0-5s gateway", "5-10s client", "5-10s gateway", "load1m");
        for (Map<String, Object> r : runs) {
            err.printf("%s: %-14s %9.2f %13.1f%% %13.1f%% %13.1f%% %13.1f%% %7.2f%n", SCENARIO, r.get("case"),
                    r.get("start_to_ready_s"), r.get("w1_client_in_slo_pct"), r.get("w1_gateway_in_slo_pct"),
                    r.get("w2_client_in_slo_pct"), r.get("w2_gateway_in_slo_pct"), r.get("load_average_1m"));
        }
        err.printf("%s: results in %s%n", SCENARIO, dir);
        return 0;
    }

    private Map<String, Object> run(String label, List<String> args, String container, Path dir, PrintWriter err)
            throws Exception {
        List<String> jvm = new ArrayList<>(gatewayOptions.jvmArgs);
        jvm.addAll(args.stream().filter(a -> a.startsWith("-X") || a.startsWith("-D")).toList());
        List<String> gatewayArgs = new ArrayList<>(gatewayOptions.gatewayArgs);
        gatewayArgs.addAll(args.stream().filter(a -> a.startsWith("--")).toList());
        RunConditions before = RunConditions.now();
        long start = System.nanoTime();
        GatewayProcess gateway = GatewayProcess.start(gatewayOptions.jar, jvm, gatewayArgs,
                dir.resolve("gateway-" + label + ".log"));
        try {
            gateway.awaitReady(gateway.admin(), gatewayOptions.startTimeout());
            ScenarioOptions.register(gateway.admin(), APP, slo.ms(), -1, null, List.of(container), "floats");
            gateway.awaitHealthReady(Duration.ofSeconds(120));
            double readyS = (System.nanoTime() - start) / 1e9;
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("case", label);
            r.put("jvm_args", jvm);
            r.put("gateway_args", gatewayArgs);
            r.put("start_to_ready_s", readyS);
            r.put("load_average_1m", before.loadAverage1m());
            Duration timeout = Duration.ofSeconds(5);
            try (GatewayPredictWorkload load = new GatewayPredictWorkload(GatewayProcess.HOST, gateway.port(), APP,
                    new RandomInputs(4), connections.max, timeout)) {
                for (int w = 1; w <= 2; w++) {
                    window(gateway, load, "w" + w + "_", seed.seed() + w, r);
                }
            }
            err.printf("%s: %s ready after %.2f s; in SLO, client/gateway: first %.0f s %.1f %%/%.1f %%, next %.1f %%/%.1f %%"
                    + " (load average %.2f)%n", SCENARIO, label, readyS, duration.seconds,
                            r.get("w1_client_in_slo_pct"),
                    r.get("w1_gateway_in_slo_pct"), r.get("w2_client_in_slo_pct"), r.get("w2_gateway_in_slo_pct"),
                    before.loadAverage1m());
            return r;
        } finally {
            ScenarioOptions.stop(gateway, dir, label);
        }
    }

    /** One window of load; its figures go into {@code r} under {@code prefix}. */
    private void window(GatewayProcess gateway, GatewayPredictWorkload load, String prefix, long windowSeed,
            Map<String, Object> r) throws Exception {
        AnswerTally tally = new AnswerTally(Math.round(slo.ms() * 1e6));
        String textBefore = GatewayMetrics.scrapeText(gateway);
        OpenLoopResult result = new OpenLoop(rate.one(), Duration.ZERO, duration.duration(),
                Duration.ofSeconds(5), windowSeed).run(load, tally);
        String textAfter = GatewayMetrics.scrapeText(gateway);
        AnswerTally.Counts counts = tally.counts();
        long sent = Math.max(1, result.sentInWindow());
        r.put(prefix + "sent", sent);
        r.put(prefix + "client_in_slo_pct", 100.0 * counts.goodput() / sent);
        r.put(prefix + "client_defaults", counts.defaults());
        r.put(prefix + "client_late", counts.late());
        r.put(prefix + "errors", result.errors());
        GatewayMetrics own = GatewayMetrics.parse(textAfter).minus(GatewayMetrics.parse(textBefore));
        double defaults = PrometheusText.parse(textAfter).sum("servegate_defaults_total", "app", APP)
                - PrometheusText.parse(textBefore).sum("servegate_defaults_total", "app", APP);
        long answered = Math.max(1, own.requests());
        // late defaults count twice here: a lower bound of the gateway's own in-SLO share
        r.put(prefix + "gateway_answers", own.requests());
        r.put(prefix + "gateway_late", own.lateAnswers());
        r.put(prefix + "gateway_defaults", (long) defaults);
        r.put(prefix + "gateway_in_slo_pct",
                100.0 * Math.max(0, own.requests() - own.lateAnswers() - defaults) / answered);
    }
}
