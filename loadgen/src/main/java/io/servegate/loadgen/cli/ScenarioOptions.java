package io.servegate.loadgen.cli;

import io.servegate.loadgen.harness.GatewayMetrics;
import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.load.AnswerTally;
import io.servegate.loadgen.load.ClosedLoop;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.load.LoadResult;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.loadgen.load.RandomInputs;
import io.servegate.loadgen.load.Workload;
import io.servegate.loadgen.report.BenchmarkReport;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.loadgen.scenario.Measurement;
import io.servegate.sdk.ModelContainer;
import io.servegate.oip.client.TensorType;
import io.servegate.containers.emulated.EmulatedPredictor;
import io.servegate.workload.admin.GatewayAdminClient;
import io.servegate.workload.arrival.ArrivalPattern;
import io.servegate.workload.report.HtmlReport;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * What the gateway scenarios (batching gain, goodput, replica scaling) share: run lengths, the
 * target API, arrivals, the gateway child, and the steps of a measured run (a picocli mixin).
 */
public final class ScenarioOptions {

    /** Which gateway API the load goes to. */
    public enum Target { clipper, oip }

    @Mixin
    GatewayOptions gateway;

    @Mixin
    ArrivalOptions arrivals;

    @Option(names = "--api", defaultValue = "clipper",
            description = "clipper: POST /{app}/predict; oip: POST /v2/models/{model}/infer (Open Inference Protocol "
                    + "REST, FP32 tensor) (default ${DEFAULT-VALUE}).")
    Target target;

    @Mixin
    DurationOption duration = new DurationOption(8);

    @Mixin
    WarmupOption warmup = new WarmupOption(3);

    @Option(names = "--jvm-warmup-s", defaultValue = "10",
            description = "Unmeasured closed-loop seconds once per gateway, for its JIT (default ${DEFAULT-VALUE}).")
    double jvmWarmupS;

    @Option(names = "--input-length", defaultValue = "8",
            description = "Floats per input of the emulated containers, random per request (default ${DEFAULT-VALUE}).")
    int inputLength;

    @Mixin
    ConnectionsOption connections = new ConnectionsOption(512);

    @Mixin
    TimeoutOption requestTimeout = new TimeoutOption(5000);

    @Mixin
    SeedOption seed;

    @Mixin
    ResultsOption results;

    void validate() {
        if (!(duration.seconds > 0) || !(warmup.seconds >= 0) || !(jvmWarmupS >= 0) || inputLength < 1 || connections.max < 1
                || requestTimeout.ms < 1) {
            throw new IllegalArgumentException("--duration-s, --input-length, --max-connections and --timeout-ms must "
                    + "be positive, --warmup-s and --jvm-warmup-s >= 0");
        }
        arrivals.process();
    }

    Duration timeout() {
        return requestTimeout.duration();
    }

    /** An emulated container (batch of b takes β + α·b ms, by sleeping) in this JVM on a free loopback port. */
    static ModelContainer<float[], String> emulated(String name, double betaMs, double alphaMs) throws IOException {
        return ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS, new EmulatedPredictor<float[]>(betaMs,
                alphaMs, 10)).name(name).version("1").host(GatewayProcess.HOST).port(0).build().start();
    }

    /**
     * Registers app {@code name} (SLO) linked to model {@code name} (batch size, -1 AIMD) served by
     * the replicas, scheduled by the {@code clipper} policy: the scenarios that use this reproduce
     * Clipper's batching figures.
     */
    static void register(GatewayAdminClient admin, String name, double sloMs, int batchSize, List<String> addresses,
            String inputType) throws IOException, InterruptedException {
        register(admin, name, sloMs, batchSize, "clipper", addresses, inputType);
    }

    /** As above, with the model's scheduling policy (null: the gateway's default). */
    static void register(GatewayAdminClient admin, String name, double sloMs, int batchSize, String scheduler,
            List<String> addresses, String inputType) throws IOException, InterruptedException {
        admin.addApp(name, inputType, "-1", Math.round(sloMs * 1000));
        admin.addModel(name, "1", inputType, batchSize, scheduler);
        admin.addModelLinks(name, List.of(name));
        for (String address : addresses) {
            String replica = admin.addContainer(name, "1", address);
            admin.awaitAvailable(replica, Duration.ofSeconds(60));
        }
    }

    /** The load for app and model {@code name} through the chosen API. */
    GatewayPredictWorkload workload(GatewayProcess g, String name, int length) {
        RandomInputs inputs = new RandomInputs(length);
        return target == Target.oip
                ? GatewayPredictWorkload.oipRest(GatewayProcess.HOST, g.port(), name, inputs, connections.max, timeout())
                : new GatewayPredictWorkload(GatewayProcess.HOST, g.port(), name, inputs, connections.max, timeout());
    }

    /** Closed-loop load with no measurement, for the gateway's JIT. */
    void jvmWarmup(Workload w, PrintWriter err, String scenario) throws InterruptedException {
        if (jvmWarmupS > 0) {
            err.printf("%s: JVM warm-up, %.1f s closed loop...%n", scenario, jvmWarmupS);
            new ClosedLoop(16, Duration.ZERO, GatewayOverheadCommand.seconds(jvmWarmupS)).run(w);
        }
    }

    /** Warm-up then a measured open-loop run at {@code rate}, goodput against {@code sloMs}. */
    Measurement open(String label, Map<String, Object> setting, GatewayProcess g, Workload w, double rate,
            double sloMs, int run, PrintWriter err, String scenario) throws InterruptedException {
        ArrivalPattern process = arrivals.process();
        if (warmup.seconds > 0) {
            new OpenLoop(rate, process, Duration.ZERO, warmup.duration(), timeout(),
                    seed.seed() + 1000 + run).run(w);
        }
        err.printf("%s: %s, open loop %.0f req/s (%s), %.1f s...%n", scenario, label, rate, process.describe(),
                duration.seconds);
        AnswerTally tally = new AnswerTally(Math.round(sloMs * 1e6));
        GatewayMetrics before = GatewayMetrics.scrape(g);
        OpenLoopResult r = new OpenLoop(rate, process, Duration.ZERO, duration.duration(),
                timeout(), seed.seed() + run).run(w, tally);
        Measurement m = Measurement.of(label, setting, r, tally.counts(),
                GatewayOverheadCommand.inside(before, GatewayMetrics.scrape(g)));
        err.printf("%s:   %.1f answers/s, goodput %.1f/s, p99 %s ms%n", scenario, m.answeredPerSec(),
                m.goodputPerSec(), HtmlReport.format(m.p99Ms()));
        return m;
    }

    /** Warm-up then a measured closed-loop run of {@code clients}, goodput against {@code sloMs}. */
    Measurement closed(String label, Map<String, Object> setting, GatewayProcess g, Workload w, int clients,
            double sloMs, PrintWriter err, String scenario) throws InterruptedException {
        if (warmup.seconds > 0) {
            new ClosedLoop(clients, Duration.ZERO, warmup.duration()).run(w);
        }
        err.printf("%s: %s, closed loop %d clients, %.1f s...%n", scenario, label, clients, duration.seconds);
        AnswerTally tally = new AnswerTally(Math.round(sloMs * 1e6));
        GatewayMetrics before = GatewayMetrics.scrape(g);
        LoadResult r = new ClosedLoop(clients, Duration.ZERO, duration.duration()).run(w, tally);
        Measurement m = Measurement.of(label, setting, r, tally.counts(),
                GatewayOverheadCommand.inside(before, GatewayMetrics.scrape(g)));
        err.printf("%s:   %.1f answers/s, goodput %.1f/s, p99 %s ms%n", scenario, m.answeredPerSec(),
                m.goodputPerSec(), HtmlReport.format(m.p99Ms()));
        return m;
    }

    /** The settings every gateway scenario reports. */
    Map<String, Object> settings() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("target", target == Target.oip ? "OIP REST POST /v2/models/{model}/infer" : "Clipper POST /{app}/predict");
        s.put("arrivals", arrivals.process().describe());
        s.put("durationS", duration.seconds);
        s.put("warmupS", warmup.seconds);
        s.put("jvmWarmupS", jvmWarmupS);
        s.put("inputLength", inputLength);
        s.put("maxConnections", connections.max);
        s.put("timeoutMs", requestTimeout.ms);
        s.put("seed", seed.seed());
        s.put("gatewayJar", gateway.jar.toString());
        s.put("gatewayJvmArgs", gateway.jvmArgs);
        s.put("gatewayArgs", gateway.gatewayArgs);
        return s;
    }

    /** The environment of a report: machine, JVM, load average at start and now. */
    static Map<String, Object> environment(RunConditions atStart) {
        Map<String, Object> env = BenchmarkReport.environmentOfThisJvm();
        env.putAll(RunConditions.span(atStart, RunConditions.now()));
        return env;
    }

    /** Stops the gateway and returns what the report says about it. */
    static Map<String, Object> stop(GatewayProcess g, Path dir, String name) throws InterruptedException {
        Path metrics = GatewayOptions.saveMetrics(g, dir, name);
        Map<String, Object> d = GatewayOptions.describe(g, metrics, 10);
        g.close();
        return d;
    }
}
