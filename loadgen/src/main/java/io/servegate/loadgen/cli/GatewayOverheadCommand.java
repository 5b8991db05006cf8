package io.servegate.loadgen.cli;

import io.servegate.containers.noop.NoopContainer;
import io.servegate.loadgen.harness.GatewayMetrics;
import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.load.AnswerTally;
import io.servegate.loadgen.load.ClosedLoop;
import io.servegate.loadgen.load.FreshInputGrpcWorkload;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.load.LoadResult;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.loadgen.load.RandomInputs;
import io.servegate.loadgen.load.Workload;
import io.servegate.loadgen.report.BenchmarkReport;
import io.servegate.loadgen.report.GatewayOverheadReport;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.oip.client.ContainerClient;
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
 * What the gateway costs: the noop container (started in this JVM) measured directly over OIP
 * gRPC and through the gateway (a child process) in the same run, one input per request — closed
 * loop, then open loop at fixed rates (Poisson unless --arrivals says otherwise). Performance is reported, never asserted.
 */
@Command(name = "gateway-overhead", mixinStandardHelpOptions = true,
        description = "The noop container directly and through the gateway, side by side: closed loop, then "
                + "open loop at fixed rates.")
public final class GatewayOverheadCommand implements Callable<Integer> {

    static final String BENCHMARK = "gateway-overhead";
    static final String APP = "noop";
    static final String MODEL = "noop";
    static final String VERSION = "1";

    @Spec
    CommandSpec spec;

    @Mixin
    GatewayOptions gatewayOptions;

    @Mixin
    ArrivalOptions arrivals;

    @Option(names = "--clients", defaultValue = "8", description = "Closed-loop clients (default ${DEFAULT-VALUE}).")
    int clients;

    @Mixin
    DurationOption duration = new DurationOption(10);

    @Mixin
    WarmupOption warmup = new WarmupOption(3);

    @Option(names = "--jvm-warmup-s", defaultValue = "30",
            description = "Unmeasured closed-loop seconds, once, before the first measurement: a sixth on the direct "
                    + "leg, the rest on the gateway, whose JVM starts cold. On 2 shared cores the gateway needs 20-30 s "
                    + "(measured: 8 clients got 644-971 req/s after 5-10 s of warm-up, ~3400 after 20-30 s) "
                    + "(default ${DEFAULT-VALUE}).")
    double jvmWarmupS;

    @Mixin
    RateOption rate = new RateOption(500, 2000);

    @Mixin
    SloOption slo;

    @Option(names = "--input-length", defaultValue = "784",
            description = "Floats per input, random and distinct per request (default ${DEFAULT-VALUE}).")
    int inputLength;

    @Mixin
    ConnectionsOption connections = new ConnectionsOption(256);

    @Mixin
    TimeoutOption requestTimeout = new TimeoutOption(10000);

    @Mixin
    SeedOption seed;

    @Mixin
    ResultsOption results;

    /** This run's results folder. */
    private Path out;

    @Override
    public Integer call() throws Exception {
        validate();
        ArrivalPattern process;
        try {
            process = arrivals.process();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        out = results.create(BENCHMARK);
        long sloNanos = slo.nanos();
        Instant startedAt = Instant.now();
        RunConditions atStart = RunConditions.now();
        var err = spec.commandLine().getErr();
        Duration timeout = requestTimeout.duration();
        RandomInputs inputs = new RandomInputs(inputLength);
        GatewayOverheadReport.ClosedLoopPair closed;
        List<GatewayOverheadReport.OpenLoopPair> open = new ArrayList<>();
        Map<String, Object> gatewayInfo;
        try (ModelContainer<float[], String> noop = NoopContainer.builder(TensorType.FLOATS).name(MODEL)
                .version(VERSION).host(GatewayProcess.HOST).port(0).build().start()) {
            String address = GatewayProcess.HOST + ":" + noop.port();
            err.printf("%s: noop container on %s; starting the gateway (%s)...%n", BENCHMARK, address,
                    gatewayOptions.jar);
            GatewayProcess gateway = gatewayOptions.start(out, BENCHMARK);
            try (ContainerClient direct = ContainerClient.connect(address);
                    GatewayPredictWorkload viaGateway = new GatewayPredictWorkload(GatewayProcess.HOST, gateway.port(),
                            APP, inputs, connections.max, timeout)) {
                GatewayAdminClient admin = gateway.admin();
                admin.addApp(APP, "floats", "-1", Math.round(slo.ms() * 1000));
                admin.addModel(MODEL, VERSION, "floats", -1);
                admin.addModelLinks(APP, List.of(MODEL));
                String replica = admin.addContainer(MODEL, VERSION, address);
                admin.awaitAvailable(replica, Duration.ofSeconds(30));
                err.printf("%s: gateway on %s:%d (admin %d), replica %s available; log %s%n", BENCHMARK,
                        GatewayProcess.HOST, gateway.port(), gateway.adminPort(), replica, gateway.log());

                Workload directLeg = new FreshInputGrpcWorkload(direct, MODEL, inputs, timeout);
                if (jvmWarmupS > 0) {
                    err.printf("%s: JVM warm-up, %.1f s direct, %.1f s through the gateway...%n", BENCHMARK,
                            jvmWarmupS / 6, jvmWarmupS * 5 / 6);
                    new ClosedLoop(clients, Duration.ZERO, seconds(jvmWarmupS / 6)).run(directLeg);
                    new ClosedLoop(clients, Duration.ZERO, seconds(jvmWarmupS * 5 / 6)).run(viaGateway);
                }

                // Each leg: an unmeasured warm-up run, then the measured run; the gateway is scraped
                // around its measured runs only.
                ClosedLoop warm = warmup.seconds > 0 ? new ClosedLoop(clients, Duration.ZERO, warmup.duration()) : null;
                ClosedLoop loop = new ClosedLoop(clients, Duration.ZERO, duration.duration());
                err.printf("%s: closed loop, %d clients, direct...%n", BENCHMARK, clients);
                if (warm != null) {
                    warm.run(directLeg);
                }
                AnswerTally directTally = new AnswerTally(sloNanos);
                LoadResult d = loop.run(directLeg, directTally);
                err.printf("%s: closed loop, %d clients, gateway...%n", BENCHMARK, clients);
                if (warm != null) {
                    warm.run(viaGateway);
                }
                AnswerTally tally = new AnswerTally(sloNanos);
                GatewayMetrics before = GatewayMetrics.scrape(gateway);
                LoadResult g = loop.run(viaGateway, tally);
                GatewayMetrics.Summary inside = inside(before, GatewayMetrics.scrape(gateway));
                closed = new GatewayOverheadReport.ClosedLoopPair(clients, d, g, directTally.counts(), tally.counts(),
                        inside,
                        GatewayOverheadReport.Ratios.of(g.requestsPerSec(), d.requestsPerSec(), g.latency(),
                                d.latency()));

                List<Double> rates = rate.all();
                for (int i = 0; i < rates.size(); i++) {
                    double offered = rates.get(i);
                    OpenLoop warmOpen = warmup.seconds > 0
                            ? new OpenLoop(offered, process, Duration.ZERO, warmup.duration(), timeout,
                                    seed.seed() + 1000 + i)
                            : null;
                    OpenLoop openLoop = new OpenLoop(offered, process, Duration.ZERO, duration.duration(), timeout,
                            seed.seed() + i);
                    err.printf("%s: open loop, %.0f req/s, direct...%n", BENCHMARK, offered);
                    if (warmOpen != null) {
                        warmOpen.run(directLeg);
                    }
                    AnswerTally openDirectTally = new AnswerTally(sloNanos);
                    OpenLoopResult od = openLoop.run(directLeg, openDirectTally);
                    err.printf("%s: open loop, %.0f req/s, gateway...%n", BENCHMARK, offered);
                    if (warmOpen != null) {
                        warmOpen.run(viaGateway);
                    }
                    AnswerTally openTally = new AnswerTally(sloNanos);
                    GatewayMetrics openBefore = GatewayMetrics.scrape(gateway);
                    OpenLoopResult og = openLoop.run(viaGateway, openTally);
                    GatewayMetrics.Summary openInside = inside(openBefore, GatewayMetrics.scrape(gateway));
                    open.add(new GatewayOverheadReport.OpenLoopPair(offered, od, og, openDirectTally.counts(),
                            openTally.counts(), openInside,
                            GatewayOverheadReport.Ratios.of(og.requestsPerSec(), od.requestsPerSec(), og.latency(),
                                    od.latency())));
                }
                Path metrics = GatewayOptions.saveMetrics(gateway, out, BENCHMARK);
                gatewayInfo = GatewayOptions.describe(gateway, metrics, 20);
            } finally {
                gateway.close();
            }
        }

        GatewayOverheadReport report = new GatewayOverheadReport(BENCHMARK, startedAt.toString(), settings(),
                environment(atStart), gatewayInfo, closed, open);
        Path file = report.writeJson(out);
        Path page = report.writeHtml(out, file);
        var stdout = spec.commandLine().getOut();
        stdout.print(report.table());
        stdout.println("wrote " + file + " and " + page);
        stdout.printf("machine load average at start / end: %s / %s%n",
                report.environment().get("loadAverageAtStart"), report.environment().get("loadAverageAtEnd"));
        reportProblems(report);
        boolean answered = closed.direct().requests() > 0 && closed.gateway().requests() > 0;
        return answered ? 0 : 1;
    }

    private void reportProblems(GatewayOverheadReport report) {
        var err = spec.commandLine().getErr();
        if (report.closedLoop().direct().firstError() != null) {
            err.printf("closed loop direct: %d errors, first: %s%n", report.closedLoop().direct().errors(),
                    report.closedLoop().direct().firstError());
        }
        if (report.closedLoop().gateway().firstError() != null) {
            err.printf("closed loop gateway: %d errors, first: %s%n", report.closedLoop().gateway().errors(),
                    report.closedLoop().gateway().firstError());
        }
        for (GatewayOverheadReport.OpenLoopPair p : report.openLoop()) {
            if (p.direct().firstError() != null) {
                err.printf("open loop %.0f/s direct: %d errors, first: %s%n", p.rate(), p.direct().errors(),
                        p.direct().firstError());
            }
            if (p.gateway().firstError() != null) {
                err.printf("open loop %.0f/s gateway: %d errors, first: %s%n", p.rate(), p.gateway().errors(),
                        p.gateway().firstError());
            }
        }
        Object problems = report.gateway().get("logProblemLines");
        if (problems instanceof Number n && n.longValue() > 0) {
            err.printf("the gateway's log has %d ERROR/WARN/exception lines; see %s%n", n.longValue(),
                    report.gateway().get("log"));
        }
    }

    private void validate() {
        if (clients < 1 || inputLength < 1 || requestTimeout.ms < 1 || connections.max < 1 || !(duration.seconds > 0)
                || !(warmup.seconds >= 0) || !(jvmWarmupS >= 0) || !(slo.ms() > 0)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--clients, --input-length, --timeout-ms, "
                    + "--max-connections, --slo-ms and --duration-s must be positive, --warmup-s and --jvm-warmup-s ≥ 0");
        }
        if (rate.all().stream().anyMatch(r -> !(r > 0) || r.isInfinite())) {
            throw new CommandLine.ParameterException(spec.commandLine(), "rates must be positive: " + rate.all());
        }
    }

    static GatewayMetrics.Summary inside(GatewayMetrics before, GatewayMetrics after) {
        return before == null || after == null ? null : after.minus(before).summary();
    }

    private static Map<String, Object> environment(RunConditions atStart) {
        Map<String, Object> env = BenchmarkReport.environmentOfThisJvm();
        env.putAll(RunConditions.span(atStart, RunConditions.now()));
        return env;
    }

    private Map<String, Object> settings() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("app", APP);
        s.put("model", MODEL + ":" + VERSION);
        s.put("batchSize", 1);
        s.put("clients", clients);
        s.put("jvmWarmupS", jvmWarmupS);
        s.put("warmupS", warmup.seconds);
        s.put("durationS", duration.seconds);
        s.put("rates", rate.all());
        s.put("arrivals", arrivals.process().describe());
        s.put("sloMs", slo.ms());
        s.put("inputLength", inputLength);
        s.put("inputs", "random, distinct per request");
        s.put("maxConnections", connections.max);
        s.put("timeoutMs", requestTimeout.ms);
        s.put("seed", seed.seed());
        s.put("gatewayJar", gatewayOptions.jar.toString());
        s.put("gatewayJvmArgs", gatewayOptions.jvmArgs);
        s.put("gatewayArgs", gatewayOptions.gatewayArgs);
        s.put("httpClient", "Reactor Netty HttpClient, HTTP/1.1 keep-alive pool");
        return s;
    }

    static Duration seconds(double s) {
        return Duration.ofNanos(Math.round(s * 1e9));
    }
}
