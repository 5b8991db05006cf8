package io.servegate.loadgen.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.servegate.containers.emulated.EmulatedPredictor;
import io.servegate.loadgen.harness.GatewayMetrics;
import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.load.AnswerTally;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.OpenLoopResult;
import io.servegate.loadgen.load.RandomInputs;
import io.servegate.loadgen.load.TimerJitter;
import io.servegate.loadgen.report.AimdReport;
import io.servegate.loadgen.report.BenchmarkReport;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import io.servegate.workload.admin.GatewayAdminClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The gateway's real-time check of AIMD batching: an emulated container (a batch of b takes
 * β + α·b ms) behind the gateway, open-loop load (Poisson unless --arrivals says otherwise) above its capacity so that batches fill,
 * and the replica's {@code max_batch_size} polled every 100 ms and compared with the analytic
 * optimum b* = floor((SLO − β) / α). Performance is reported, never asserted.
 */
@Command(name = "aimd", mixinStandardHelpOptions = true,
        description = "AIMD batch size of the gateway against the analytic optimum of an emulated container.")
public final class AimdCommand implements Callable<Integer> {

    static final String BENCHMARK = "aimd";
    static final String APP = "emu";
    static final String MODEL = "emu";
    static final String VERSION = "1";

    @Spec
    CommandSpec spec;

    @Mixin
    GatewayOptions gatewayOptions;

    @Mixin
    ArrivalOptions arrivals;

    @Mixin
    BatchCostOption cost = new BatchCostOption(5, 0.5);

    @Mixin
    SloOption slo;

    @Mixin
    RateOption rate = new RateOption(2000);

    @Mixin
    DurationOption duration = new DurationOption(20);

    @Mixin
    WarmupOption warmup = new WarmupOption(30);

    @Option(names = "--late-tolerance-ms", defaultValue = "2",
            description = "Answers later than SLO + this count as late (default ${DEFAULT-VALUE}).")
    double lateToleranceMs;

    @Option(names = "--timer-control", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Run a bare timer thread in a JVM of its own during the measured window, and report how "
                    + "late it ran: the machine's own scheduling floor under this load (default ${DEFAULT-VALUE}).")
    boolean timerControl;

    @Option(names = "--poll-ms", defaultValue = "100",
            description = "Period of get_all_containers polls (default ${DEFAULT-VALUE}).")
    long pollMs;

    @Option(names = "--input-length", defaultValue = "8",
            description = "Floats per input, random and distinct per request (default ${DEFAULT-VALUE}).")
    int inputLength;

    @Mixin
    ConnectionsOption connections = new ConnectionsOption(512);

    @Mixin
    TimeoutOption requestTimeout = new TimeoutOption(10000);

    @Mixin
    SeedOption seed;

    @Mixin
    ResultsOption results;

    @Override
    public Integer call() throws Exception {
        validate();
        Path out = results.create(BENCHMARK);
        Instant startedAt = Instant.now();
        RunConditions atStart = RunConditions.now();
        var err = spec.commandLine().getErr();
        AimdReport.Analytic analytic = AimdReport.Analytic.of(cost.betaMs(), cost.alphaMs(), slo.ms());
        Duration timeout = requestTimeout.duration();
        List<long[]> polls = Collections.synchronizedList(new ArrayList<>());
        long measureFrom;
        OpenLoopResult load;
        AnswerTally tally = new AnswerTally(Math.round((slo.ms() + lateToleranceMs) * 1e6));
        Map<String, Object> gatewayInfo;
        GatewayMetrics.Summary inside;
        TimerJitter.Result machineFloor;
        EmulatedPredictor<float[]> predictor = new EmulatedPredictor<>(cost.betaMs(), cost.alphaMs(), 10);
        try (ModelContainer<float[], String> emu = ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS,
                predictor).name(MODEL).version(VERSION).host(GatewayProcess.HOST).port(0).build().start()) {
            String address = GatewayProcess.HOST + ":" + emu.port();
            err.printf("%s: emulated container (beta %.3f ms, alpha %.3f ms) on %s; starting the gateway (%s)...%n",
                    BENCHMARK, cost.betaMs(), cost.alphaMs(), address, gatewayOptions.jar);
            GatewayProcess gateway = gatewayOptions.start(out, BENCHMARK);
            ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "aimd-poller");
                t.setDaemon(true);
                return t;
            });
            try (GatewayPredictWorkload queries = new GatewayPredictWorkload(GatewayProcess.HOST, gateway.port(), APP,
                    new RandomInputs(inputLength), connections.max, timeout)) {
                GatewayAdminClient admin = gateway.admin();
                admin.addApp(APP, "floats", "-1", Math.round(slo.ms() * 1000));
                admin.addModel(MODEL, VERSION, "floats", -1, "clipper"); // AIMD is Clipper's policy
                admin.addModelLinks(APP, List.of(MODEL));
                String replica = admin.addContainer(MODEL, VERSION, address);
                admin.awaitAvailable(replica, Duration.ofSeconds(30));
                err.printf("%s: gateway on %s:%d (admin %d), replica %s available; log %s%n", BENCHMARK,
                        GatewayProcess.HOST, gateway.port(), gateway.adminPort(), replica, gateway.log());

                // polls keep their clock reading; t = 0 (the start of the measured run) is applied afterwards
                AtomicReference<Throwable> pollFailure = new AtomicReference<>();
                poller.scheduleAtFixedRate(() -> {
                    try {
                        long at = System.nanoTime();
                        JsonNode c = admin.container(replica);
                        polls.add(new long[] {at, c == null ? -1 : c.path("max_batch_size").asInt(-1),
                                c == null ? -1 : c.path("queue_length").asInt(-1)});
                    } catch (Exception e) {
                        pollFailure.compareAndSet(null, e);
                    }
                }, 0, pollMs, TimeUnit.MILLISECONDS);
                if (warmup.seconds > 0) {
                    err.printf("%s: warm-up, open loop, %.0f req/s, %.1f s...%n", BENCHMARK, rate.one(),
                            warmup.seconds);
                    new OpenLoop(rate.one(), arrivals.process(), Duration.ZERO, warmup.duration(),
                            timeout, seed.seed() + 1000).run(queries);
                }
                err.printf("%s: open loop, %.0f req/s, %.1f s...%n", BENCHMARK, rate.one(), duration.seconds);
                GatewayMetrics before = GatewayMetrics.scrape(gateway);
                // the control: a bare timer thread in a JVM of its own, over the same window
                TimerJitter.Child control = timerControl
                        ? TimerJitter.Child.start(duration.duration()) : null;
                measureFrom = System.nanoTime();
                load = new OpenLoop(rate.one(), arrivals.process(), Duration.ZERO, duration.duration(),
                        timeout, seed.seed()).run(queries, tally);
                inside = GatewayOverheadCommand.inside(before, GatewayMetrics.scrape(gateway));
                machineFloor = control == null ? null : control.await(Duration.ofSeconds(30));
                poller.shutdown();
                poller.awaitTermination(5, TimeUnit.SECONDS);
                if (pollFailure.get() != null) {
                    err.printf("%s: a poll of get_all_containers failed: %s%n", BENCHMARK, pollFailure.get());
                }
                Path metrics = GatewayOptions.saveMetrics(gateway, out, BENCHMARK);
                gatewayInfo = GatewayOptions.describe(gateway, metrics, 20);
            } finally {
                poller.shutdownNow();
                gateway.close();
            }
        }

        List<AimdReport.Sample> samples = new ArrayList<>();
        synchronized (polls) {
            for (long[] p : polls) {
                samples.add(new AimdReport.Sample((p[0] - measureFrom) / 1e9, (int) p[1], (int) p[2]));
            }
        }
        AimdReport.BatchSizeStats lastHalf = AimdReport.BatchSizeStats.of(samples, duration.seconds / 2,
                duration.seconds, analytic.bStar());
        boolean keptUp = load.achievedSendRate() >= 0.97 * load.scheduledRate() && load.sendLagP99Ms() <= 2.0;
        String note = String.format(Locale.ROOT, "the load generator sent %.1f req/s of %.1f scheduled (%.0f offered); "
                + "send lag p99 %.3f ms, max %.3f ms%s", load.achievedSendRate(), load.scheduledRate(), rate.one(),
                load.sendLagP99Ms(), load.sendLagMaxMs(), keptUp ? "" : " - it did NOT keep up, so the offered load "
                        + "was lower and burstier than scheduled (latencies still count from the schedule)");
        AimdReport report = new AimdReport(BENCHMARK, startedAt.toString(), settings(),
                environment(atStart), gatewayInfo, analytic, lastHalf, load, tally.counts(), inside, machineFloor,
                keptUp, note, samples);
        Path file = report.writeJson(out);
        var stdout = spec.commandLine().getOut();
        stdout.print(report.table());
        stdout.println("wrote " + file);
        stdout.printf("machine load average at start / end: %s / %s%n",
                report.environment().get("loadAverageAtStart"), report.environment().get("loadAverageAtEnd"));
        if (load.firstError() != null) {
            err.printf("%s: %d errors, first: %s%n", BENCHMARK, load.errors(), load.firstError());
        }
        Object problems = gatewayInfo.get("logProblemLines");
        if (problems instanceof Number n && n.longValue() > 0) {
            err.printf("the gateway's log has %d ERROR/WARN/exception lines; see %s%n", n.longValue(),
                    gatewayInfo.get("log"));
        }
        return load.requests() > 0 && lastHalf.samples() > 0 ? 0 : 1;
    }

    private void validate() {
        try {
            arrivals.process();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        if (!(cost.betaMs() >= 0) || !(cost.alphaMs() > 0) || !(slo.ms() > cost.betaMs() + cost.alphaMs()) || !(rate.one() > 0) || !(duration.seconds > 0)
                || !(warmup.seconds >= 0) || !(lateToleranceMs >= 0) || pollMs < 1 || inputLength < 1
                || connections.max < 1 || requestTimeout.ms < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "need --beta-ms ≥ 0, --alpha-ms > 0, "
                    + "--slo-ms > beta + alpha, and positive --rate, --duration-s, --poll-ms, --input-length, "
                    + "--max-connections and --timeout-ms (--warmup-s and --late-tolerance-ms ≥ 0)");
        }
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
        s.put("batchSize", "adaptive (-1)");
        s.put("betaMs", cost.betaMs());
        s.put("alphaMs", cost.alphaMs());
        s.put("sloMs", slo.ms());
        s.put("rate", rate.one());
        s.put("arrivals", arrivals.process().describe());
        s.put("warmupS", warmup.seconds);
        s.put("durationS", duration.seconds);
        s.put("lateToleranceMs", lateToleranceMs);
        s.put("pollMs", pollMs);
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
}
