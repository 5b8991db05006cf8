package io.servegate.loadgen.cli;

import io.servegate.containers.noop.NoopContainer;
import io.servegate.loadgen.harness.FloorProcess;
import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.harness.OtlpSink;
import io.servegate.loadgen.harness.ProcessCost;
import io.servegate.loadgen.load.AnswerTally;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.loadgen.load.RandomInputs;
import io.servegate.loadgen.report.BenchmarkReport;
import io.servegate.loadgen.report.CpuPerQueryReport;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import io.servegate.workload.admin.GatewayAdminClient;
import io.servegate.workload.arrival.ArrivalPattern;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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
 * What a gateway process spends per answered query, beside a floor that does only what every
 * answer needs ({@code FloorServer}: Reactor Netty HTTP in, the same OIP client out, one call
 * per request) and, optionally, another gateway build and the gateway with tracing on at given
 * sampling ratios: the same noop container (in this JVM), the
 * same client and arrivals, the servers taking turns at each rate in each round. CPU comes from
 * each server's {@code /proc/<pid>/stat}, allocation from its JVM's thread allocation counters.
 */
@Command(name = "cpu-per-query", mixinStandardHelpOptions = true,
        description = "CPU and allocation per answered query of the gateway, a bare Reactor Netty + OIP floor and "
                + "optionally a baseline gateway build and the gateway with tracing on, side by side at fixed open-loop rates.")
public final class CpuPerQueryCommand implements Callable<Integer> {

    static final String BENCHMARK = "cpu-per-query";
    private static final String APP = "noop";
    private static final String MODEL = "noop";
    private static final String VERSION = "1";

    @Spec
    CommandSpec spec;

    @Mixin
    GatewayOptions gatewayOptions;

    @Mixin
    ArrivalOptions arrivals;

    @Mixin
    SloOption slo;

    @Mixin
    SeedOption seed;

    @Option(names = "--baseline-gateway-jar",
            description = "Another gateway build measured beside the first (same JVM options and settings).")
    Path baselineJar;

    @Option(names = "--floor-jvm-arg", defaultValue = "-Xmx1g",
            description = "JVM option of the floor server's process, repeatable (default ${DEFAULT-VALUE}).")
    List<String> floorJvmArgs = new ArrayList<>();

    @Option(names = "--tracing-ratio", split = ",", paramLabel = "RATIO",
            description = "Also measure the gateway with tracing on at these sampling ratios, e.g. 1,0.1: one more "
                    + "gateway (same jar and settings) each, exporting OTLP over HTTP to a sink in this JVM.")
    List<Double> tracingRatios = new ArrayList<>();

    @Mixin
    RateOption rate = new RateOption(800, 1600, 4000);

    @Option(names = "--rounds", defaultValue = "2",
            description = "Rounds; in each, every server takes a turn at every rate, in a rotating order "
                    + "(default ${DEFAULT-VALUE}).")
    int rounds;

    @Mixin
    DurationOption duration = new DurationOption(10);

    @Mixin
    WarmupOption warmup = new WarmupOption(3);

    @Option(names = "--jvm-warmup-s", defaultValue = "20",
            description = "Unmeasured seconds per server, once, at the highest rate, before the first leg "
                    + "(default ${DEFAULT-VALUE}).")
    double jvmWarmupS;

    @Option(names = "--input-length", defaultValue = "8",
            description = "Floats per input, random and distinct per request (default ${DEFAULT-VALUE}).")
    int inputLength;

    @Mixin
    ConnectionsOption connections = new ConnectionsOption(16);

    @Mixin
    TimeoutOption requestTimeout = new TimeoutOption(5000);

    @Mixin
    ResultsOption results;

    /** A server under test: its name, its HTTP port and what it has spent. */
    private record Server(String name, GatewayPredictWorkload client, ProcessCost cost) {
    }

    /** Where the gateways with tracing on export their spans; null without --tracing-ratio. */
    private OtlpSink sink;

    @Override
    public Integer call() throws Exception {
        if (tracingRatios.stream().anyMatch(r -> !(r > 0 && r <= 1))) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--tracing-ratio must be in (0, 1]");
        }
        if (rate.all().isEmpty() || rate.all().stream().anyMatch(r -> !(r > 0) || r.isInfinite()) || rounds < 1
                || !(duration.seconds > 0) || !(warmup.seconds >= 0) || !(jvmWarmupS >= 0) || inputLength < 1 || connections.max < 1
                || requestTimeout.ms < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--rate must be positive numbers, --rounds, "
                    + "--duration-s, --input-length, --max-connections and --timeout-ms positive, the warm-ups >= 0");
        }
        ArrivalPattern process = arrivals.process();
        Path out = results.create(BENCHMARK);
        Instant startedAt = Instant.now();
        RunConditions atStart = RunConditions.now();
        var err = spec.commandLine().getErr();
        Duration timeout = requestTimeout.duration();
        RandomInputs inputs = new RandomInputs(inputLength);
        List<CpuPerQueryReport.Leg> legs = new ArrayList<>();
        List<AutoCloseable> toClose = new ArrayList<>();
        try (ModelContainer<float[], String> noop = NoopContainer.builder(TensorType.FLOATS).name(MODEL)
                .version(VERSION).host(GatewayProcess.HOST).port(0).build().start()) {
            String address = GatewayProcess.HOST + ":" + noop.port();
            List<Server> servers = new ArrayList<>();
            FloorProcess floor = FloorProcess.start(floorJvmArgs, address, MODEL,
                    out.resolve("floor.log"), Duration.ofSeconds(gatewayOptions.startTimeoutS));
            toClose.add(floor);
            servers.add(server("floor", floor.port(), floor.pid(), inputs, timeout, toClose));
            GatewayProcess gateway = gatewayOptions.start(out, BENCHMARK);
            toClose.add(gateway);
            deploy(gateway, address);
            servers.add(server("gateway", gateway.port(), gateway.pid(), inputs, timeout, toClose));
            if (baselineJar != null) {
                GatewayProcess baseline = GatewayProcess.start(baselineJar, gatewayOptions.jvmArgs,
                        gatewayOptions.gatewayArgs, out.resolve("gateway-baseline.log"));
                toClose.add(baseline);
                baseline.awaitReady(baseline.admin(), Duration.ofSeconds(gatewayOptions.startTimeoutS));
                deploy(baseline, address);
                servers.add(server("baseline", baseline.port(), baseline.pid(), inputs, timeout, toClose));
            }
            if (!tracingRatios.isEmpty()) {
                sink = OtlpSink.start();
                toClose.add(sink);
            }
            for (double ratio : tracingRatios) {
                String name = "tracing-" + ratio;
                GatewayProcess traced = gatewayOptions.start(out, name, List.of("--servegate.tracing.enabled=true",
                        "--servegate.tracing.sampling-ratio=" + ratio, "--servegate.tracing.protocol=http-protobuf",
                        "--servegate.tracing.endpoint=" + sink.url()));
                toClose.add(traced);
                deploy(traced, address);
                servers.add(server(name, traced.port(), traced.pid(), inputs, timeout, toClose));
            }
            double top = rate.all().stream().mapToDouble(Double::doubleValue).max().orElseThrow();
            for (Server s : servers) {
                if (jvmWarmupS > 0) {
                    err.printf("%s: JVM warm-up of %s, %.0f s at %.0f req/s...%n", BENCHMARK, s.name(), jvmWarmupS, top);
                    new OpenLoop(top, process, Duration.ZERO, seconds(jvmWarmupS), timeout, seed.seed() + 7).run(s.client());
                }
            }
            List<Double> rates = rate.all();
            for (int round = 0; round < rounds; round++) {
                for (int i = 0; i < rates.size(); i++) {
                    double offered = rates.get(i);
                    for (int k = 0; k < servers.size(); k++) {
                        Server s = servers.get((k + round + i) % servers.size());
                        err.printf("%s: round %d, %.0f req/s, %s...%n", BENCHMARK, round + 1, offered, s.name());
                        legs.add(leg(s, round, offered, process, timeout, seed.seed() + 100L * round + i));
                        // written after every leg, so that a run cut short keeps what it measured
                        report(startedAt, atStart, process, legs).writeJson(out);
                    }
                }
            }
        } finally {
            for (int i = toClose.size() - 1; i >= 0; i--) {
                toClose.get(i).close();
            }
        }
        CpuPerQueryReport report = report(startedAt, atStart, process, legs);
        Map<String, Object> env = report.environment();
        Path file = report.writeJson(out);
        var stdout = spec.commandLine().getOut();
        stdout.print(report.table());
        stdout.printf("machine load average at start / end: %s / %s%nwrote %s%n", env.get("loadAverageAtStart"),
                env.get("loadAverageAtEnd"), file);
        return legs.stream().allMatch(l -> l.answered() > 0) ? 0 : 1;
    }

    private CpuPerQueryReport report(Instant startedAt, RunConditions atStart, ArrivalPattern process,
            List<CpuPerQueryReport.Leg> legs) {
        Map<String, Object> env = BenchmarkReport.environmentOfThisJvm();
        env.putAll(RunConditions.span(atStart, RunConditions.now()));
        return new CpuPerQueryReport(BENCHMARK, startedAt.toString(), settings(process), env, List.copyOf(legs),
                CpuPerQueryReport.ratios(legs));
    }

    private Server server(String name, int port, long pid, RandomInputs inputs, Duration timeout,
            List<AutoCloseable> toClose) {
        GatewayPredictWorkload client = new GatewayPredictWorkload(GatewayProcess.HOST, port, APP, inputs,
                connections.max, timeout);
        toClose.add(client);
        ProcessCost cost = ProcessCost.of(pid);
        toClose.add(cost);
        return new Server(name, client, cost);
    }

    private void deploy(GatewayProcess gateway, String address) throws Exception {
        GatewayAdminClient admin = gateway.admin();
        admin.addApp(APP, "floats", "-1", Math.round(slo.ms() * 1000));
        admin.addModel(MODEL, VERSION, "floats", -1);
        admin.addModelLinks(APP, List.of(MODEL));
        admin.awaitAvailable(admin.addContainer(MODEL, VERSION, address), Duration.ofSeconds(30));
    }

    private CpuPerQueryReport.Leg leg(Server s, int round, double rate, ArrivalPattern process, Duration timeout,
            long seedOfLeg) throws InterruptedException {
        if (warmup.seconds > 0) {
            new OpenLoop(rate, process, Duration.ZERO, warmup.duration(), timeout, seedOfLeg + 50).run(s.client());
        }
        AnswerTally tally = new AnswerTally(slo.nanos());
        ProcessCost.Reading before = s.cost().read();
        OpenLoopResult r = new OpenLoop(rate, process, Duration.ZERO, duration.duration(), timeout, seedOfLeg)
                .run(s.client(), tally);
        ProcessCost.Reading spent = s.cost().read().minus(before);
        long answered = r.requests();
        double perQuery = answered == 0 ? Double.NaN : 1.0 / answered;
        return new CpuPerQueryReport.Leg(s.name(), round, rate, r.requestsPerSec(), answered,
                r.errors() + r.unanswered(), r.scheduled() == 0 ? 0 : (double) tally.counts().goodput() / r.scheduled(),
                spent.cpuS(), spent.cpuS() * 1e6 * perQuery,
                spent.allocatedBytes() < 0 ? -1 : spent.allocatedBytes() * perQuery, r.latency(),
                RunConditions.now().loadAverage());
    }

    private Map<String, Object> settings(ArrivalPattern process) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("app", APP + " -> " + MODEL + ":" + VERSION + " (noop container in the load generator's JVM)");
        s.put("rates", rate.all());
        s.put("rounds", rounds);
        s.put("durationS", duration.seconds);
        s.put("warmupS", warmup.seconds);
        s.put("jvmWarmupS", jvmWarmupS);
        s.put("arrivals", process.describe());
        s.put("sloMs", slo.ms());
        s.put("inputLength", inputLength);
        s.put("maxConnections", connections.max);
        s.put("timeoutMs", requestTimeout.ms);
        s.put("seed", seed.seed());
        s.put("gatewayJar", gatewayOptions.jar.toString());
        s.put("baselineGatewayJar", baselineJar == null ? null : baselineJar.toString());
        s.put("gatewayJvmArgs", gatewayOptions.jvmArgs);
        s.put("floorJvmArgs", floorJvmArgs);
        s.put("gatewayArgs", gatewayOptions.gatewayArgs);
        s.put("tracingRatios", tracingRatios);
        s.put("otlpExports", sink == null ? null : Map.of("requests", sink.exports(), "bytes", sink.bytes()));
        s.put("floor", "FloorServer: Reactor Netty HTTP, streaming JSON parse, one OIP ModelInfer per request");
        return s;
    }

    private static Duration seconds(double s) {
        return Duration.ofNanos(Math.round(s * 1e9));
    }
}
