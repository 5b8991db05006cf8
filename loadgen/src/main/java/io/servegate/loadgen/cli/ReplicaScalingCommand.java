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
 * Clipper's Fig. 6 analogue: throughput and p99 of one model as its emulated replicas go
 * 1 → 2 → 4, closed loop with a fixed number of clients per replica. The emulated containers
 * sleep (β + α·b ms per batch) rather than compute, so on a machine of 2 cores the replicas do not
 * compete for CPU and scaling reflects the gateway's spreading of batches, not the cores.
 */
@Command(name = "replica-scaling", mixinStandardHelpOptions = true,
        description = "Throughput and p99 with 1, 2, 4 emulated replicas of one model (Clipper Fig. 6 analogue).")
public final class ReplicaScalingCommand implements Callable<Integer> {

    static final String SCENARIO = "replica-scaling";

    @Spec
    CommandSpec spec;

    @Mixin
    ScenarioOptions options;

    @Option(names = "--replicas", split = ",", defaultValue = "1,2,4",
            description = "Replica counts, one run each (default ${DEFAULT-VALUE}).")
    List<Integer> replicas;

    @Option(names = "--clients-per-replica", defaultValue = "32",
            description = "Closed-loop clients per replica (default ${DEFAULT-VALUE}).")
    int clientsPerReplica;

    @Mixin
    BatchCostOption cost = new BatchCostOption(20, 2);

    @Option(names = "--batch-size", defaultValue = "8",
            description = "Fixed batch size of the model, -1 for AIMD (default ${DEFAULT-VALUE}).")
    int batchSize;

    @Mixin
    SloOption slo;

    @Override
    public Integer call() throws Exception {
        try {
            options.validate();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        if (replicas.isEmpty() || replicas.stream().anyMatch(r -> r < 1) || clientsPerReplica < 1 || !(cost.betaMs() >= 0)
                || !(cost.alphaMs() >= 0) || batchSize == 0 || batchSize < -1 || !(slo.ms() > 0)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "need replicas >= 1, clients per replica >= 1, "
                    + "beta and alpha >= 0, batch size >= 1 or -1, SLO > 0");
        }
        var err = spec.commandLine().getErr();
        Instant startedAt = Instant.now();
        RunConditions atStart = RunConditions.now();
        Path dir = options.results.create(SCENARIO);
        List<Measurement> results = new ArrayList<>();
        List<ModelContainer<float[], String>> containers = new ArrayList<>();
        Map<String, Object> gatewayInfo;
        GatewayProcess gateway = options.gateway.start(dir, SCENARIO);
        try {
            GatewayAdminClient admin = gateway.admin();
            boolean warmed = false;
            for (int r : replicas) {
                String name = "scale" + r;
                List<String> addresses = new ArrayList<>();
                for (int i = 0; i < r; i++) {
                    ModelContainer<float[], String> c = ScenarioOptions.emulated(name, cost.betaMs(), cost.alphaMs());
                    containers.add(c);
                    addresses.add(GatewayProcess.HOST + ":" + c.port());
                }
                ScenarioOptions.register(admin, name, slo.ms(), batchSize, addresses, "floats");
                try (GatewayPredictWorkload w = options.workload(gateway, name, options.inputLength)) {
                    if (!warmed) {
                        options.jvmWarmup(w, err, SCENARIO);
                        warmed = true;
                    }
                    Map<String, Object> setting = new LinkedHashMap<>();
                    setting.put("replicas", r);
                    results.add(options.closed(r + (r == 1 ? " replica" : " replicas"), setting, gateway, w,
                            clientsPerReplica * r, slo.ms(), err, SCENARIO));
                }
            }
        } finally {
            gatewayInfo = ScenarioOptions.stop(gateway, dir, SCENARIO);
            for (ModelContainer<float[], String> c : containers) {
                c.close();
            }
        }

        List<String> findings = new ArrayList<>();
        Measurement first = results.get(0);
        for (Measurement m : results.subList(1, results.size())) {
            findings.add(String.format(Locale.ROOT, "%s: %.2fx the throughput of %s (ideal %dx), p99 %s ms vs %s ms.",
                    m.label(), m.answeredPerSec() / first.answeredPerSec(), first.label(),
                    (Integer) m.setting().get("replicas") / (Integer) first.setting().get("replicas"),
                    HtmlReport.format(m.p99Ms()), HtmlReport.format(first.p99Ms())));
        }
        findings.add("The emulated replicas sleep instead of computing, so on this machine's "
                + Runtime.getRuntime().availableProcessors() + " cores they do not compete for CPU: scaling measures "
                + "how well the gateway spreads batches over replicas, until the gateway or load generator saturates.");
        Map<String, Object> settings = options.settings();
        settings.put("replicas", replicas);
        settings.put("clientsPerReplica", clientsPerReplica);
        settings.put("betaMs", cost.betaMs());
        settings.put("alphaMs", cost.alphaMs());
        settings.put("batchSize", batchSize);
        settings.put("sloMs", slo.ms());
        ScenarioReport report = new ScenarioReport(SCENARIO, startedAt.toString(), settings,
                ScenarioOptions.environment(atStart), List.of(gatewayInfo), results, findings);
        Path json = report.writeJson(dir);
        List<Double> xs = results.stream().map(m -> ((Integer) m.setting().get("replicas")).doubleValue()).toList();
        Path tput = Charts.lines(dir.resolve("throughput.png"), "Throughput vs replicas", "replicas",
                "answers/s", List.of(
                        new Charts.Series("measured", xs, results.stream().map(Measurement::answeredPerSec).toList()),
                        new Charts.Series("ideal (linear)", xs, xs.stream()
                                .map(x -> x * first.answeredPerSec() / xs.get(0)).toList())));
        Path p99 = Charts.lines(dir.resolve("p99.png"), "p99 latency vs replicas", "replicas", "ms", List.of(
                new Charts.Series("p99", xs, results.stream().map(Measurement::p99Ms).toList()),
                new Charts.Series("p50", xs, results.stream()
                        .map(m -> m.latency() == null ? null : m.latency().p50Ms()).toList())));
        report.html("Replica scaling", "Throughput and latency of one model with " + replicas + " emulated "
                + "replicas (Clipper NSDI'17 Fig. 6 analogue), closed loop with " + clientsPerReplica
                + " clients per replica.",
                json).image(tput, "throughput vs replicas").image(p99, "p99 vs replicas")
                .write(dir.resolve("index.html"));
        var stdout = spec.commandLine().getOut();
        stdout.print(report.table());
        stdout.println("wrote " + dir.resolve("index.html"));
        return results.stream().allMatch(m -> m.answeredPerSec() > 0) ? 0 : 1;
    }
}
