package io.servegate.loadgen.cli;

import io.servegate.loadgen.harness.ContainerChild;
import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.loadgen.report.ScenarioReport;
import io.servegate.loadgen.scenario.Measurement;
import io.servegate.sdk.ModelContainer;
import io.servegate.workload.report.Charts;
import io.servegate.workload.report.HtmlReport;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Clipper's Fig. 4/5 analogue: what batching buys at a latency SLO. The same open-loop load goes to
 * one model under four batching strategies — none (batch size 1), a fixed batch size, AIMD, and
 * AIMD with delayed batching (the gateway's {@code servegate.batching.batch-wait}) — for an
 * emulated container (a batch of b sleeps β + α·b ms) and a real ONNX model (Fashion-MNIST CNN,
 * computing on the CPU). Reports throughput, goodput and p99 per strategy.
 */
@Command(name = "batching-gain", mixinStandardHelpOptions = true,
        description = "No batching vs fixed vs AIMD vs AIMD + delayed batching at one SLO, emulated and ONNX models.")
public final class BatchingGainCommand implements Callable<Integer> {

    static final String SCENARIO = "batching-gain";

    /** A batching strategy: the model's batch size and whether the gateway delays partial batches. */
    enum Strategy {
        none("no batching (1)"), fixed("fixed"), aimd("AIMD"), aimdDelayed("AIMD + delayed");

        final String title;

        Strategy(String title) {
            this.title = title;
        }
    }

    /** The models compared. */
    enum Model { emulated, onnx }

    @Spec
    CommandSpec spec;

    @Mixin
    ScenarioOptions options;

    @Option(names = "--models", split = ",", defaultValue = "emulated,onnx",
            description = "Models: emulated, onnx (default ${DEFAULT-VALUE}).")
    List<Model> models;

    @Option(names = "--strategies", split = ",", defaultValue = "none,fixed,aimd,aimdDelayed",
            description = "Strategies: none, fixed, aimd, aimdDelayed (default ${DEFAULT-VALUE}).")
    List<Strategy> strategies;

    @Mixin
    SloOption slo;

    @Option(names = "--fixed-batch-size", defaultValue = "16",
            description = "Batch size of the fixed strategy (default ${DEFAULT-VALUE}).")
    int fixedBatchSize;

    @Option(names = "--batch-wait-ms", defaultValue = "2",
            description = "servegate.batching.batch-wait of the delayed strategy (default ${DEFAULT-VALUE}).")
    double batchWaitMs;

    @Mixin
    BatchCostOption cost = new BatchCostOption(5, 0.5);

    @Option(names = "--emulated-rate", defaultValue = "800",
            description = "Offered requests/s to the emulated model (default ${DEFAULT-VALUE}).")
    double emulatedRate;

    @Option(names = "--onnx-rate", defaultValue = "400",
            description = "Offered requests/s to the ONNX model (default ${DEFAULT-VALUE}).")
    double onnxRate;

    @Option(names = "--onnx-jar", defaultValue = "containers/onnx/target/onnx-container.jar",
            description = "The ONNX container's jar (default ${DEFAULT-VALUE}).")
    Path onnxJar;

    @Option(names = "--onnx-model", defaultValue = "containers/onnx/models/fmnist-cnn.onnx",
            description = "The ONNX model (784 floats in, default ${DEFAULT-VALUE}).")
    Path onnxModel;

    @Option(names = "--onnx-threads", defaultValue = "1",
            description = "ONNX Runtime intra-op threads (default ${DEFAULT-VALUE}).")
    int onnxThreads;

    @Override
    public Integer call() throws Exception {
        try {
            options.validate();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        if (models.isEmpty() || strategies.isEmpty() || !(slo.ms() > 0) || fixedBatchSize < 1 || !(batchWaitMs > 0)
                || !(emulatedRate > 0) || !(onnxRate > 0) || !(cost.betaMs() >= 0) || !(cost.alphaMs() >= 0)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "need models, strategies, and positive "
                    + "SLO, fixed batch size, batch wait and rates");
        }
        var err = spec.commandLine().getErr();
        Instant startedAt = Instant.now();
        RunConditions atStart = RunConditions.now();
        Path dir = options.results.create(SCENARIO);
        List<Measurement> results = new ArrayList<>();
        List<Map<String, Object>> gateways = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        int run = 0;
        // one gateway without delayed batching, one with it (a gateway-wide setting)
        for (boolean delayed : new boolean[] {false, true}) {
            List<Strategy> here = strategies.stream().filter(s -> (s == Strategy.aimdDelayed) == delayed).toList();
            if (here.isEmpty()) {
                continue;
            }
            String gatewayName = SCENARIO + (delayed ? "-delayed" : "");
            GatewayProcess gateway = options.gateway.start(dir, gatewayName, delayed
                    ? List.of("--servegate.batching.batch-wait=" + Math.round(batchWaitMs * 1000) + "us") : List.of());
            // a failed run (e.g. a registration timing out on a loaded machine) ends this gateway's runs, and is
            // reported, but the runs already measured still make a report
            try {
                boolean warmed = false;
                for (Model model : models) {
                    for (Strategy s : here) {
                        String name = model + "-" + s.name().toLowerCase(Locale.ROOT);
                        int batchSize = switch (s) {
                            case none -> 1;
                            case fixed -> fixedBatchSize;
                            case aimd, aimdDelayed -> -1;
                        };
                        Map<String, Object> setting = new LinkedHashMap<>();
                        setting.put("model", model.name());
                        setting.put("strategy", s.name());
                        setting.put("batchSize", batchSize);
                        setting.put("batchWaitMs", s == Strategy.aimdDelayed ? batchWaitMs : 0);
                        String label = model + ": " + s.title + (s == Strategy.fixed ? " " + fixedBatchSize : "");
                        if (model == Model.emulated) {
                            try (ModelContainer<float[], String> c = ScenarioOptions.emulated(name, cost.betaMs(), cost.alphaMs())) {
                                ScenarioOptions.register(gateway.admin(), name, slo.ms(), batchSize,
                                        List.of(GatewayProcess.HOST + ":" + c.port()), "floats");
                                results.add(measure(label, setting, gateway, name, options.inputLength, emulatedRate,
                                        !warmed, run++));
                            }
                        } else {
                            try (ContainerChild c = ContainerChild.start(onnxJar, List.of("-Xmx512m"),
                                    List.of("--model", onnxModel.toString(), "--name", name, "--intra-op-threads",
                                            String.valueOf(onnxThreads)), dir.resolve("container-" + name + ".log"),
                                    120)) {
                                ScenarioOptions.register(gateway.admin(), name, slo.ms(), batchSize,
                                        List.of(c.address()), "floats");
                                results.add(measure(label, setting, gateway, name, 784, onnxRate, !warmed, run++));
                            }
                        }
                        warmed = true;
                    }
                }
            } catch (java.io.IOException | RuntimeException e) {
                failures.add(gatewayName + ": " + e);
                err.printf("%s: %s failed: %s%n", SCENARIO, gatewayName, e);
            } finally {
                gateways.add(ScenarioOptions.stop(gateway, dir, gatewayName));
            }
        }

        List<String> findings = new ArrayList<>();
        failures.forEach(f -> findings.add("FAILED, runs missing: " + f));
        for (Model model : models) {
            Measurement none = find(results, model, Strategy.none);
            for (Measurement m : results) {
                if (none != null && m != none && model.name().equals(m.setting().get("model"))
                        && none.answeredPerSec() > 0) {
                    findings.add(String.format(Locale.ROOT, "%s: throughput %.2fx that of no batching, goodput %.1f/s "
                            + "vs %.1f/s; p99 %s ms vs %s ms.", m.label(), m.answeredPerSec() / none.answeredPerSec(),
                            m.goodputPerSec(), none.goodputPerSec(), HtmlReport.format(m.p99Ms()),
                            HtmlReport.format(none.p99Ms())));
                }
            }
        }
        Map<String, Object> settings = options.settings();
        settings.put("models", models);
        settings.put("strategies", strategies);
        settings.put("sloMs", slo.ms());
        settings.put("fixedBatchSize", fixedBatchSize);
        settings.put("batchWaitMs", batchWaitMs);
        settings.put("emulated", "beta " + cost.betaMs() + " ms + alpha " + cost.alphaMs() + " ms per input, sleeping");
        settings.put("emulatedRate", emulatedRate);
        settings.put("onnxModel", onnxModel.toString());
        settings.put("onnxRate", onnxRate);
        settings.put("onnxThreads", onnxThreads);
        ScenarioReport report = new ScenarioReport(SCENARIO, startedAt.toString(), settings,
                ScenarioOptions.environment(atStart), gateways, results, findings);
        Path json = report.writeJson(dir);
        HtmlReport page = report.html("Batching gain", String.format(Locale.ROOT, "Throughput, goodput and p99 at a "
                + "%.0f ms SLO under four batching strategies (Clipper NSDI'17 Fig. 4/5 analogue): open-loop load of "
                + "%.0f req/s to the emulated model and %.0f req/s to the ONNX model.", slo.ms(), emulatedRate, onnxRate),
                json);
        for (Model model : models) {
            List<Measurement> ms = results.stream().filter(m -> model.name().equals(m.setting().get("model")))
                    .toList();
            if (ms.isEmpty()) {
                continue;
            }
            List<String> cats = ms.stream().map(m -> m.label().substring(m.label().indexOf(':') + 2)).toList();
            Map<String, List<Double>> tput = Charts.series();
            tput.put("answers/s", ms.stream().map(Measurement::answeredPerSec).toList());
            tput.put("goodput/s", ms.stream().map(Measurement::goodputPerSec).toList());
            page.image(Charts.bars(dir.resolve(model + "-throughput.png"), model + ": throughput and goodput",
                    "per second", cats, tput), model + " throughput");
            Map<String, List<Double>> lat = Charts.series();
            lat.put("p50 ms", ms.stream().map(m -> m.latency() == null ? null : m.latency().p50Ms()).toList());
            lat.put("p99 ms", ms.stream().map(Measurement::p99Ms).toList());
            page.image(Charts.bars(dir.resolve(model + "-latency.png"), model + ": latency (SLO " + slo.ms() + " ms)",
                    "ms", cats, lat), model + " latency");
        }
        page.write(dir.resolve("index.html"));
        var stdout = spec.commandLine().getOut();
        stdout.print(report.table());
        stdout.println("wrote " + dir.resolve("index.html"));
        return failures.isEmpty() && results.stream().allMatch(m -> m.answeredPerSec() > 0) ? 0 : 1;
    }

    private Measurement measure(String label, Map<String, Object> setting, GatewayProcess gateway, String name,
            int inputLength, double rate, boolean jvmWarmup, int run) throws InterruptedException {
        var err = spec.commandLine().getErr();
        try (GatewayPredictWorkload w = options.workload(gateway, name, inputLength)) {
            if (jvmWarmup) {
                options.jvmWarmup(w, err, SCENARIO);
            }
            return options.open(label, setting, gateway, w, rate, slo.ms(), run, err, SCENARIO);
        }
    }

    private static Measurement find(List<Measurement> results, Model model, Strategy s) {
        return results.stream().filter(m -> model.name().equals(m.setting().get("model"))
                && s.name().equals(m.setting().get("strategy"))).findFirst().orElse(null);
    }
}
