package io.servegate.loadgen.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.servegate.core.autoscaling.MdcQueue;
import io.servegate.loadgen.harness.GatewayMetrics;
import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.harness.PrometheusText;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.RandomInputs;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.workload.admin.GatewayAdminClient;
import io.servegate.workload.report.HtmlReport;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The autoscaler's capacity model against measured latency: c emulated replicas deployed through
 * the gateway's process manager, sent one query at a time (Clipper's policy, batch size 1) in
 * arrival order, are the c servers of an M/D/c queue. For each c and load, the mean latency the
 * model predicts from the window's arrival rate and service time (the mean time a lane is held
 * per query, latency minus queue delay) is set against the scheduler's measured mean latency,
 * arrival to answer ({@code servegate_scheduler_latency_seconds}). Reported, never asserted.
 */
@Command(name = "capacity", mixinStandardHelpOptions = true,
        description = "M/D/c mean latency predicted from the scheduler's profile against the gateway's measured "
                + "latency, for 1, 2 and 4 replicas at several loads.")
public final class CapacityCheckCommand implements Callable<Integer> {

    static final String SCENARIO = "capacity";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    @Spec
    CommandSpec spec;

    @Mixin
    GatewayOptions gatewayOptions;

    @Option(names = "--replicas", split = ",", defaultValue = "1,2,4", description = "(default ${DEFAULT-VALUE})")
    List<Integer> replicaCounts;

    @Option(names = "--loads", split = ",", defaultValue = "0.3,0.5,0.7,0.85",
            description = "Offered load as a share of c over the service time measured at 0.3 load (default ${DEFAULT-VALUE}).")
    List<Double> loads;

    @Option(names = "--service-ms", defaultValue = "5",
            description = "The emulated container's time per query (β; α is 0) (default ${DEFAULT-VALUE}).")
    double serviceMs;

    @Mixin
    DurationOption duration = new DurationOption(20);

    @Mixin
    WarmupOption warmup = new WarmupOption(10);

    @Option(names = "--container-jar", defaultValue = "containers/emulated/target/emulated-container.jar",
            description = "(default ${DEFAULT-VALUE})")
    String containerJar;

    @Mixin
    SeedOption seed;

    @Mixin
    ResultsOption results;

    /**
     * One measured point.
     *
     * @param profileMs          ℓ(1) as the scheduler plans with it (service estimate plus a low quantile of the overhead)
     * @param lowLoadServiceMs   the mean time a lane was held per query at 0.3 load, the calibration
     * @param serviceMs          the same in this window: mean latency minus mean queue delay
     * @param predictedMs        M/D/c's mean latency at the window's rate with the window's service time
     * @param predictedLowLoadMs the same with the low-load service time
     */
    record Point(int replicas, double load, double rate, double profileMs, double lowLoadServiceMs, double serviceMs,
            double predictedMs, double predictedLowLoadMs, double measuredMs, long queries) {
        double error() {
            return (predictedMs - measuredMs) / measuredMs;
        }
    }

    /** The scheduler's view of one model over a window, from two scrapes. */
    record Window(double rate, double latencyMs, double queueDelayMs, long queries) {

        static Window between(PrometheusText before, PrometheusText after, String model, double seconds) {
            double count = delta(before, after, "servegate_scheduler_latency_seconds_count", model);
            double latency = delta(before, after, "servegate_scheduler_latency_seconds_sum", model);
            double queued = delta(before, after, "servegate_scheduler_queue_delay_seconds_sum", model);
            double dispatched = delta(before, after, "servegate_scheduler_queue_delay_seconds_count", model);
            return new Window(count / seconds, 1000 * latency / count, 1000 * queued / dispatched, (long) count);
        }

        /** The mean time a lane is held per query (batches of one): the M/D/c service time. */
        double serviceMs() {
            return latencyMs - queueDelayMs;
        }

        private static double delta(PrometheusText before, PrometheusText after, String metric, String model) {
            return after.sum(metric, "model", model) - before.sum(metric, "model", model);
        }
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        RunConditions atStart = RunConditions.now();
        Instant startedAt = Instant.now();
        Path dir = results.create(SCENARIO);
        GatewayProcess gateway = gatewayOptions.start(dir, SCENARIO, List.of(
                "--servegate.containers.manager=process",
                "--servegate.containers.process.require-admin-token=false"));
        List<Point> points = new ArrayList<>();
        Map<String, Object> gatewayInfo;
        try {
            GatewayAdminClient admin = gateway.admin();
            for (int c : replicaCounts) {
                points.addAll(measure(gateway, admin, c, err));
            }
        } finally {
            gatewayInfo = ScenarioOptions.stop(gateway, dir, SCENARIO);
        }
        write(dir, points, gatewayInfo, atStart, startedAt);
        return 0;
    }

    private List<Point> measure(GatewayProcess gateway, GatewayAdminClient admin, int c, PrintWriter err) throws Exception {
        String name = "mdc" + c;
        admin.addApp(name, "floats", "-1", 10_000_000);
        admin.post("deploy_model", Map.of("model_name", name, "model_version", "1", "input_type", "floats",
                "batch_size", 1, "scheduler", "clipper",
                "command", List.of("java", "-jar", containerJar, "--beta-ms", Double.toString(serviceMs),
                        "--alpha-ms", "0", "--input-type", "floats"), "num_replicas", c));
        admin.addModelLinks(name, List.of(name));
        admin.awaitAvailableReplicas(name, c, Duration.ofSeconds(120));
        Duration timeout = Duration.ofSeconds(15);
        List<Point> out = new ArrayList<>();
        try (GatewayPredictWorkload load = new GatewayPredictWorkload(GatewayProcess.HOST, gateway.port(), name,
                new RandomInputs(8), 512, timeout)) {
            // calibration: the service time per query as the scheduler's lanes are held, at low load
            PrometheusText before = PrometheusText.parse(GatewayMetrics.scrapeText(gateway));
            double profileMs = profileMs(before, name);
            new OpenLoop(0.3 * c * 1000 / profileMs, Duration.ZERO, warmup.duration(), timeout,
                    seed.seed()).run(load);
            Window calibration = Window.between(before, PrometheusText.parse(GatewayMetrics.scrapeText(gateway)), name,
                    warmup.seconds);
            double lowLoadMs = calibration.serviceMs();
            for (double rho : loads) {
                before = PrometheusText.parse(GatewayMetrics.scrapeText(gateway));
                double rate = rho * c * 1000 / lowLoadMs;
                err.printf(Locale.ROOT, "%s: %d replica(s), load %.2f: %.0f/s (service %.3f ms at low load)...%n",
                        SCENARIO, c, rho, rate, lowLoadMs);
                new OpenLoop(rate, Duration.ZERO, duration.duration(), timeout,
                        seed.seed() + Math.round(rho * 100)).run(load);
                Window w = Window.between(before, PrometheusText.parse(GatewayMetrics.scrapeText(gateway)), name,
                        duration.seconds);
                double predicted = MdcQueue.meanLatency(w.rate(), c, w.serviceMs() / 1000) * 1000;
                double predictedLowLoad = MdcQueue.meanLatency(w.rate(), c, lowLoadMs / 1000) * 1000;
                Point p = new Point(c, rho, w.rate(), profileMs, lowLoadMs, w.serviceMs(), predicted,
                        predictedLowLoad, w.latencyMs(), w.queries());
                err.printf(Locale.ROOT, "%s:   service %.3f ms; predicted %.3f ms (%.3f with the low-load service), "
                        + "measured %.3f ms (%+.1f %%)%n", SCENARIO, w.serviceMs(), p.predictedMs(),
                        p.predictedLowLoadMs(), p.measuredMs(), 100 * p.error());
                out.add(p);
            }
        }
        admin.post("set_num_replicas", Map.of("model_name", name, "model_version", "1", "num_replicas", 0));
        return out;
    }

    /** ℓ(1) as the scheduler plans with it: its service-time estimate for a batch of one plus the overhead. */
    private static double profileMs(PrometheusText metrics, String model) {
        double service = metrics.where("servegate_profile_estimate_seconds", "model", model).stream()
                .filter(s -> "1".equals(s.labels().get("batch_size"))).mapToDouble(PrometheusText.Sample::value)
                .findFirst().orElseThrow(() -> new IllegalStateException("no profile estimate for " + model));
        double overhead = metrics.sum("servegate_profile_overhead_seconds", "model", model);
        return 1000 * (service + overhead);
    }

    private void write(Path dir, List<Point> points, Map<String, Object> gatewayInfo, RunConditions atStart,
            Instant startedAt) throws Exception {
        List<List<Object>> rows = new ArrayList<>();
        List<Map<String, Object>> json = new ArrayList<>();
        double worst = 0;
        for (Point p : points) {
            rows.add(List.of(p.replicas(), p.load(), p.rate(), p.profileMs(), p.lowLoadServiceMs(), p.serviceMs(),
                    p.predictedMs(), p.predictedLowLoadMs(), p.measuredMs(),
                    String.format(Locale.ROOT, "%+.1f %%", 100 * p.error())));
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("replicas", p.replicas());
            m.put("load", p.load());
            m.put("rate", p.rate());
            m.put("profile_ms", p.profileMs());
            m.put("low_load_service_ms", p.lowLoadServiceMs());
            m.put("service_ms", p.serviceMs());
            m.put("predicted_with_low_load_service_ms", p.predictedLowLoadMs());
            m.put("predicted_mean_ms", p.predictedMs());
            m.put("measured_mean_ms", p.measuredMs());
            m.put("error", p.error());
            m.put("queries", p.queries());
            json.add(m);
            worst = Math.max(worst, Math.abs(p.error()));
        }
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("replicas", replicaCounts);
        settings.put("loads", loads);
        settings.put("containers", "emulated (process manager), " + serviceMs + " ms per query");
        settings.put("scheduling", "clipper, batch size 1 (FCFS, one query per replica at a time); SLO 10 s");
        settings.put("durationS", duration.seconds);
        settings.put("calibration", "the service time at 0.3 of c/ℓ(1) over the warm-up sets the loads' rates");
        settings.put("warmupS", warmup.seconds);
        settings.put("seed", seed.seed());
        Map<String, Object> all = new LinkedHashMap<>();
        all.put("scenario", SCENARIO);
        all.put("settings", settings);
        all.put("points", json);
        all.put("worst_abs_error", worst);
        all.put("gateway", gatewayInfo);
        all.put("environment", ScenarioOptions.environment(atStart));
        Path file = dir.resolve(SCENARIO + ".json");
        JSON.writeValue(file.toFile(), all);
        new HtmlReport("Capacity model against measured latency", "M/D/c (SERF's queueing estimate with "
                + "Cosmetatos' correction), given the window's arrival rate and service time (the mean time a "
                + "replica's lane is held per query: mean latency minus mean queue delay, as SERF profiles its "
                + "service rates), against the scheduler's measured mean latency, arrival to answer. The load is "
                + "set from the service time measured at 0.3 load; the predictions with that service time are "
                + "shown too.")
                .table(List.of("replicas", "load", "rate /s", "profile ℓ(1) ms", "service ms, low load",
                        "service ms", "predicted ms", "predicted ms, low-load service", "measured ms", "error"), rows)
                .paragraph(String.format(Locale.ROOT, "Largest error: %.1f %%.", 100 * worst))
                .settings(settings)
                .conditions(startedAt.toString(), ScenarioOptions.environment(atStart))
                .link(file, "all numbers (JSON)")
                .write(dir.resolve(SCENARIO + ".html"));
        spec.commandLine().getErr().printf(Locale.ROOT, "%s: largest error %.1f %%; report in %s%n", SCENARIO,
                100 * worst, dir);
    }
}
