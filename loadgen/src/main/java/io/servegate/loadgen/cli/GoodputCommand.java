package io.servegate.loadgen.cli;

import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.loadgen.report.ScenarioReport;
import io.servegate.loadgen.scenario.Measurement;
import io.servegate.sdk.ModelContainer;
import io.servegate.workload.admin.GatewayAdminClient;
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
 * Goodput (predictions within the SLO) of an emulated container behind the gateway with AIMD
 * batching: (1) at one offered load for SLOs from 10 to 100 ms, one app and model per SLO; (2) at
 * one SLO for offered loads from 0.5× to 2× the capacity measured first (closed loop), which shows
 * whether goodput holds a flat top past capacity (the gateway sheds the excess as defaults) or
 * collapses (queueing makes everything late).
 */
@Command(name = "goodput", mixinStandardHelpOptions = true,
        description = "Goodput vs SLO (10-100 ms) and vs offered load (0.5x-2x capacity), emulated container, AIMD.")
public final class GoodputCommand implements Callable<Integer> {

    static final String SCENARIO = "goodput";

    @Spec
    CommandSpec spec;

    @Mixin
    ScenarioOptions options;

    @Option(names = "--slos-ms", split = ",", defaultValue = "10,20,50,100",
            description = "SLOs of the first sweep (default ${DEFAULT-VALUE}).")
    List<Double> slosMs;

    @Option(names = "--slo-rate", defaultValue = "1000",
            description = "Offered requests/s of the SLO sweep (default ${DEFAULT-VALUE}).")
    double sloRate;

    @Mixin
    SloOption slo;

    @Option(names = "--load-factors", split = ",", defaultValue = "0.5,1,1.5,2",
            description = "Offered loads of the second sweep, as multiples of the measured capacity "
                    + "(default ${DEFAULT-VALUE}).")
    List<Double> loadFactors;

    @Option(names = "--capacity-clients", defaultValue = "64",
            description = "Closed-loop clients of the capacity measurement (default ${DEFAULT-VALUE}).")
    int capacityClients;

    @Mixin
    BatchCostOption cost = new BatchCostOption(5, 0.5);

    @Override
    public Integer call() throws Exception {
        try {
            options.validate();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        if (slosMs.stream().anyMatch(s -> !(s > 0)) || loadFactors.stream().anyMatch(f -> !(f > 0))
                || !(sloRate > 0) || !(slo.ms() > 0) || capacityClients < 1 || !(cost.betaMs() >= 0) || !(cost.alphaMs() >= 0)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "SLOs, load factors, rates and clients must "
                    + "be positive");
        }
        var err = spec.commandLine().getErr();
        Instant startedAt = Instant.now();
        RunConditions atStart = RunConditions.now();
        Path dir = options.results.create(SCENARIO);
        List<Measurement> bySlo = new ArrayList<>();
        List<Measurement> byLoad = new ArrayList<>();
        Measurement capacity = null;
        List<ModelContainer<float[], String>> containers = new ArrayList<>();
        Map<String, Object> gatewayInfo;
        GatewayProcess gateway = options.gateway.start(dir, SCENARIO);
        int run = 0;
        try {
            GatewayAdminClient admin = gateway.admin();
            // the load sweep's model first: its capacity run doubles as the JVM warm-up's partner
            String loadModel = "load-slo" + Math.round(slo.ms());
            containers.add(ScenarioOptions.emulated(loadModel, cost.betaMs(), cost.alphaMs()));
            ScenarioOptions.register(admin, loadModel, slo.ms(), -1,
                    List.of(GatewayProcess.HOST + ":" + containers.get(0).port()), "floats");
            try (GatewayPredictWorkload w = options.workload(gateway, loadModel, options.inputLength)) {
                options.jvmWarmup(w, err, SCENARIO);
                capacity = options.closed("capacity (closed loop)", Map.of("sloMs", slo.ms()), gateway, w,
                        capacityClients, slo.ms(), err, SCENARIO);
                double cap = capacity.answeredPerSec();
                for (double f : loadFactors) {
                    Map<String, Object> setting = new LinkedHashMap<>();
                    setting.put("sloMs", slo.ms());
                    setting.put("loadFactor", f);
                    byLoad.add(options.open(String.format(Locale.ROOT, "%.2gx capacity", f), setting, gateway, w,
                            f * cap, slo.ms(), run++, err, SCENARIO));
                }
            }
            for (double slo : slosMs) {
                String name = "slo" + Math.round(slo);
                ModelContainer<float[], String> c = ScenarioOptions.emulated(name, cost.betaMs(), cost.alphaMs());
                containers.add(c);
                ScenarioOptions.register(admin, name, slo, -1, List.of(GatewayProcess.HOST + ":" + c.port()),
                        "floats");
                try (GatewayPredictWorkload w = options.workload(gateway, name, options.inputLength)) {
                    Map<String, Object> setting = new LinkedHashMap<>();
                    setting.put("sloMs", slo);
                    bySlo.add(options.open(String.format(Locale.ROOT, "SLO %.0f ms", slo), setting, gateway, w,
                            sloRate, slo, run++, err, SCENARIO));
                }
            }
        } finally {
            gatewayInfo = ScenarioOptions.stop(gateway, dir, SCENARIO);
            for (ModelContainer<float[], String> c : containers) {
                c.close();
            }
        }

        List<String> findings = new ArrayList<>();
        findings.add(String.format(Locale.ROOT, "Measured capacity at SLO %.0f ms: %.0f answers/s (closed loop, %d "
                + "clients, goodput %.0f/s, p99 %s ms).", slo.ms(), capacity.answeredPerSec(), capacityClients,
                capacity.goodputPerSec(), HtmlReport.format(capacity.p99Ms())));
        findings.add(shape(byLoad));
        List<Measurement> all = new ArrayList<>();
        all.add(capacity);
        all.addAll(byLoad);
        all.addAll(bySlo);
        Map<String, Object> settings = options.settings();
        settings.put("slosMs", slosMs);
        settings.put("sloRate", sloRate);
        settings.put("sloMs", slo.ms());
        settings.put("loadFactors", loadFactors);
        settings.put("capacityClients", capacityClients);
        settings.put("batching", "AIMD (-1)");
        settings.put("emulated", "beta " + cost.betaMs() + " ms + alpha " + cost.alphaMs() + " ms per input, sleeping");
        ScenarioReport report = new ScenarioReport(SCENARIO, startedAt.toString(), settings,
                ScenarioOptions.environment(atStart), List.of(gatewayInfo), all, findings);
        Path json = report.writeJson(dir);
        List<Double> offered = byLoad.stream().map(Measurement::offeredRate).toList();
        Path loadPng = Charts.lines(dir.resolve("goodput-vs-load.png"), "Goodput vs offered load (SLO " + slo.ms()
                + " ms)", "offered requests/s", "per second", List.of(
                        new Charts.Series("answers/s", offered, byLoad.stream().map(Measurement::answeredPerSec)
                                .toList()),
                        new Charts.Series("goodput/s", offered, byLoad.stream().map(Measurement::goodputPerSec)
                                .toList()),
                        new Charts.Series("offered", offered, offered)));
        List<Double> slos = bySlo.stream().map(m -> (Double) m.setting().get("sloMs")).toList();
        Path sloPng = Charts.lines(dir.resolve("goodput-vs-slo.png"), String.format(Locale.ROOT,
                "Goodput vs SLO (%.0f req/s offered)", sloRate), "SLO ms", "per second", List.of(
                        new Charts.Series("goodput/s", slos, bySlo.stream().map(Measurement::goodputPerSec).toList()),
                        new Charts.Series("answers/s", slos, bySlo.stream().map(Measurement::answeredPerSec)
                                .toList())));
        Path sloP99 = Charts.lines(dir.resolve("p99-vs-slo.png"), "p99 vs SLO", "SLO ms", "ms", List.of(
                new Charts.Series("p99", slos, bySlo.stream().map(Measurement::p99Ms).toList()),
                new Charts.Series("SLO", slos, slos)));
        report.html("Goodput vs SLO and offered load", "Goodput (predictions within the SLO) of an emulated container "
                + "behind the gateway with AIMD batching, for SLOs from " + slosMs.get(0) + " to "
                + slosMs.get(slosMs.size() - 1) + " ms and for offered loads from " + loadFactors.get(0) + "x to "
                + loadFactors.get(loadFactors.size() - 1) + "x the measured capacity.", json)
                .image(loadPng, "goodput vs offered load").image(sloPng, "goodput vs SLO")
                .image(sloP99, "p99 vs SLO").write(dir.resolve("index.html"));
        var stdout = spec.commandLine().getOut();
        stdout.print(report.table());
        stdout.println("wrote " + dir.resolve("index.html"));
        return all.stream().allMatch(m -> m.answeredPerSec() > 0) ? 0 : 1;
    }

    /**
     * Flat top or collapse: past the best goodput, does goodput at the highest load stay within
     * 80% of that best?
     */
    static String shape(List<Measurement> byLoad) {
        Measurement best = byLoad.stream().max((a, b) -> Double.compare(a.goodputPerSec(), b.goodputPerSec()))
                .orElseThrow();
        Measurement last = byLoad.get(byLoad.size() - 1);
        double kept = best.goodputPerSec() > 0 ? last.goodputPerSec() / best.goodputPerSec() : 0;
        String verdict = kept >= 0.8 ? "a flat top" : "a collapse";
        return String.format(Locale.ROOT, "Goodput vs offered load is %s: at %s goodput is %.0f/s, %.0f%% of the best "
                + "(%.0f/s at %s); %d defaults and %d late answers at the highest load.", verdict, last.label(),
                last.goodputPerSec(), 100 * kept, best.goodputPerSec(), best.label(), last.defaults(), last.late());
    }
}
