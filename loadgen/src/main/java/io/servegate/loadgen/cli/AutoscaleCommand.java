package io.servegate.loadgen.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.loadgen.load.GatewayAnswer;
import io.servegate.loadgen.load.GatewayPredictWorkload;
import io.servegate.loadgen.load.OpenLoop;
import io.servegate.loadgen.load.RandomInputs;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.workload.admin.GatewayAdminClient;
import io.servegate.workload.arrival.ArrivalPattern;
import io.servegate.workload.arrival.RateTrace;
import io.servegate.workload.report.Charts;
import io.servegate.workload.report.HtmlReport;
import java.time.Instant;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLongArray;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The gateway's autoscaler live: one model of emulated containers (a batch of b sleeps
 * β + α·b ms) deployed through the gateway's process manager, autoscaled between
 * {@code --min-replicas} and {@code --max-replicas}, under open-loop Poisson load that steps
 * through {@code --steps}. Every second the report samples the replicas the autoscaler asked for
 * and those ready; answers are counted by the second they were due to be sent. Reported, never
 * asserted: the reaction after each step, and goodput outside the first seconds after each step.
 */
@Command(name = "autoscale", mixinStandardHelpOptions = true,
        description = "The autoscaler live: load steps through the gateway, replicas started and stopped by its "
                + "process manager; rate, replicas and goodput over time.")
public final class AutoscaleCommand implements Callable<Integer> {

    static final String SCENARIO = "autoscale";
    private static final String APP = "autoscaled";
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    @Spec
    CommandSpec spec;

    @Mixin
    GatewayOptions gatewayOptions;

    @Option(names = "--steps", split = ",", defaultValue = "200:60,3000:60,200:90",
            description = "RATE:SECONDS of open-loop Poisson load, in order (default ${DEFAULT-VALUE}).")
    List<String> steps;

    @Mixin
    WarmupOption warmup = new WarmupOption(20);

    @Option(names = "--settle-s", defaultValue = "10",
            description = "Seconds after each step left out of its goodput (default ${DEFAULT-VALUE}).")
    int settleS;

    @Mixin
    BatchCostOption cost = new BatchCostOption(5, 0.5);

    @Mixin
    SloOption slo;

    @Option(names = "--min-replicas", defaultValue = "1", description = "(default ${DEFAULT-VALUE})")
    int minReplicas;

    @Option(names = "--max-replicas", defaultValue = "8", description = "(default ${DEFAULT-VALUE})")
    int maxReplicas;

    @Option(names = "--cooldown-s", defaultValue = "15", description = "Scale-down cooldown (default ${DEFAULT-VALUE}).")
    double cooldownS;

    @Option(names = "--container-jar", defaultValue = "containers/emulated/target/emulated-container.jar",
            description = "The emulated container's jar, run as 'java -jar' by the process manager (default ${DEFAULT-VALUE}).")
    String containerJar;

    @Option(names = "--input-length", defaultValue = "8", description = "Floats per input (default ${DEFAULT-VALUE}).")
    int inputLength;

    @Mixin
    ConnectionsOption connections = new ConnectionsOption(512);

    @Mixin
    TimeoutOption requestTimeout = new TimeoutOption(5000);

    @Mixin
    SeedOption seed;

    @Mixin
    ResultsOption results;

    /** One second of the run. */
    record Second(int t, double offered, long answered, long good, int replicas, int ready) {
    }

    /** A phase: one step's rate, its span, and its goodput once settled. */
    record Phase(double rate, int from, int to, long offeredSettled, long goodSettled) {
        double goodShare() {
            return offeredSettled == 0 ? Double.NaN : (double) goodSettled / offeredSettled;
        }
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter err = spec.commandLine().getErr();
        double[] rates = new double[steps.size()];
        int[] lengths = new int[steps.size()];
        for (int i = 0; i < steps.size(); i++) {
            String[] p = steps.get(i).trim().split(":");
            if (p.length != 2) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--steps wants RATE:SECONDS, got " + steps.get(i));
            }
            rates[i] = Double.parseDouble(p[0]);
            lengths[i] = Integer.parseInt(p[1]);
        }
        int total = java.util.Arrays.stream(lengths).sum();
        double[] perSecond = new double[total];
        for (int i = 0, t = 0; i < rates.length; i++) {
            for (int k = 0; k < lengths[i]; k++) {
                perSecond[t++] = rates[i];
            }
        }
        RateTrace trace = RateTrace.perSecond("steps " + steps, perSecond);
        RunConditions atStart = RunConditions.now();
        Instant startedAt = Instant.now();
        Path dir = results.create(SCENARIO);
        err.printf("%s: starting the gateway (process container manager)...%n", SCENARIO);
        // loopback only: the bench's admin calls carry no token, so deploy_model's command needs the opt-out
        GatewayProcess gateway = gatewayOptions.start(dir, SCENARIO, List.of(
                "--servegate.containers.manager=process",
                "--servegate.containers.process.require-admin-token=false"));
        List<Second> seconds = new ArrayList<>();
        JsonNode finalState;
        Map<String, Object> gatewayInfo;
        try {
            GatewayAdminClient admin = gateway.admin();
            admin.addApp(APP, "floats", "-1", Math.round(slo.ms() * 1000));
            admin.post("deploy_model", Map.of("model_name", APP, "model_version", "1", "input_type", "floats",
                    "command", List.of("java", "-jar", containerJar, "--beta-ms", Double.toString(cost.betaMs()),
                            "--alpha-ms", Double.toString(cost.alphaMs()), "--input-type", "floats"),
                    "num_replicas", minReplicas));
            admin.addModelLinks(APP, List.of(APP));
            admin.awaitAvailableReplicas(APP, minReplicas, Duration.ofSeconds(120));
            admin.post("set_autoscaling", Map.of("model_name", APP, "min_replicas", minReplicas, "max_replicas",
                    maxReplicas, "cooldown_s", cooldownS));
            Duration timeout = requestTimeout.duration();
            try (GatewayPredictWorkload load = new GatewayPredictWorkload(GatewayProcess.HOST, gateway.port(), APP,
                    new RandomInputs(inputLength), connections.max, timeout)) {
                if (warmup.seconds > 0) {
                    err.printf("%s: warm-up, %.0f s at %.0f/s...%n", SCENARIO, warmup.seconds, rates[0]);
                    new OpenLoop(rates[0], Duration.ZERO, warmup.duration(), timeout, seed.seed() + 1)
                            .run(load);
                }
                err.printf("%s: steps %s...%n", SCENARIO, steps);
                AtomicLongArray answered = new AtomicLongArray(total + 1);
                AtomicLongArray good = new AtomicLongArray(total + 1);
                long sloNanos = Math.round(slo.ms() * 1e6);
                long[] start = new long[1];
                Thread sampler = new Thread(() -> sample(admin, seconds, perSecond, answered, good, start, total),
                        "autoscale-sampler");
                sampler.setDaemon(true);
                sampler.start();
                start[0] = System.nanoTime();
                new OpenLoop(trace.meanRate(), ArrivalPattern.trace(trace, true), Duration.ZERO,
                        Duration.ofSeconds(total), timeout, seed.seed()).run(load, (answer, latency) -> {
                            long due = System.nanoTime() - latency - start[0];
                            int s = (int) Math.min(total, Math.max(0, due / 1_000_000_000L));
                            answered.incrementAndGet(s);
                            if (!(answer instanceof GatewayAnswer a && a.isDefault()) && latency <= sloNanos) {
                                good.incrementAndGet(s);
                            }
                        });
                sampler.join((total + 10) * 1000L);
                // the sampler wrote each second before its answers were all in: recount from the arrays
                for (int i = 0; i < seconds.size(); i++) {
                    Second s = seconds.get(i);
                    seconds.set(i, new Second(s.t(), s.offered(), answered.get(s.t()), good.get(s.t()), s.replicas(),
                            s.ready()));
                }
            }
            finalState = admin.post("get_autoscaling", Map.of("model_name", APP)).get(0);
            admin.post("set_autoscaling", Map.of("model_name", APP, "enabled", false));
            admin.post("set_num_replicas", Map.of("model_name", APP, "model_version", "1", "num_replicas", 0));
        } finally {
            gatewayInfo = ScenarioOptions.stop(gateway, dir, SCENARIO);
        }
        List<Phase> phases = new ArrayList<>();
        for (int i = 0, t = 0; i < rates.length; t += lengths[i], i++) {
            long offered = 0;
            long goodSum = 0;
            for (Second s : seconds) {
                if (s.t() >= t + settleS && s.t() < t + lengths[i]) {
                    offered += s.answered();
                    goodSum += s.good();
                }
            }
            phases.add(new Phase(rates[i], t, t + lengths[i], offered, goodSum));
        }
        for (Phase p : phases) {
            err.printf(Locale.ROOT, "%s: %.0f/s, seconds %d-%d: goodput %.1f %% of answers after the first %d s%n",
                    SCENARIO, p.rate(), p.from(), p.to(), 100 * p.goodShare(), settleS);
        }
        write(dir, trace, seconds, phases, finalState, gatewayInfo, atStart, startedAt);
        return 0;
    }

    private void sample(GatewayAdminClient admin, List<Second> seconds, double[] perSecond, AtomicLongArray answered,
            AtomicLongArray good, long[] start, int total) {
        try {
            while (start[0] == 0) {
                Thread.sleep(1);
            }
            for (int t = 0; t < total; t++) {
                long at = start[0] + (t + 1) * 1_000_000_000L;
                long wait = at - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                }
                JsonNode state = admin.post("get_autoscaling", Map.of("model_name", APP)).get(0);
                JsonNode signals = state.get("signals");
                int ready = signals == null || signals.isNull() ? 0 : signals.get("ready_replicas").intValue();
                seconds.add(new Second(t, perSecond[t], answered.get(t), good.get(t), state.get("replicas").intValue(),
                        ready));
            }
        } catch (Exception e) {
            throw new IllegalStateException("sampling the autoscaler failed", e);
        }
    }

    private void write(Path dir, RateTrace trace, List<Second> seconds, List<Phase> phases, JsonNode finalState,
            Map<String, Object> gatewayInfo, RunConditions atStart, Instant startedAt) throws Exception {
        List<Double> t = seconds.stream().map(s -> (double) s.t()).toList();
        Path png = Charts.lines(dir.resolve(SCENARIO + ".png"), "Autoscaling live: rate, goodput and replicas",
                "time (s)", "queries/s; replicas x 250", List.of(
                        new Charts.Series("offered", t, seconds.stream().map(Second::offered).toList()),
                        new Charts.Series("goodput", t, seconds.stream().map(s -> (double) s.good()).toList()),
                        new Charts.Series("replicas x 250", t,
                                seconds.stream().map(s -> 250.0 * s.replicas()).toList()),
                        new Charts.Series("ready x 250", t, seconds.stream().map(s -> 250.0 * s.ready()).toList())));
        List<Map<String, Object>> phaseRows = new ArrayList<>();
        List<List<Object>> table = new ArrayList<>();
        for (Phase p : phases) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("rate", p.rate());
            m.put("from_s", p.from());
            m.put("to_s", p.to());
            m.put("answers_after_settle", p.offeredSettled());
            m.put("good_after_settle", p.goodSettled());
            m.put("good_share_after_settle", p.goodShare());
            phaseRows.add(m);
            table.add(List.of(p.rate(), p.from() + "-" + p.to(), p.offeredSettled(), 100 * p.goodShare()));
        }
        List<List<Object>> decisions = new ArrayList<>();
        for (JsonNode d : finalState.get("decisions")) {
            decisions.add(List.of(d.get("at").asText(), d.get("from").asInt(), d.get("to").asInt(),
                    d.get("reason").asText(), d.get("detail").asText(), d.get("outcome").asText()));
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("scenario", SCENARIO);
        json.put("settings", settings(trace));
        json.put("phases", phaseRows);
        json.put("seconds", seconds);
        json.put("autoscaler", JSON.convertValue(finalState, Map.class));
        json.put("gateway", gatewayInfo);
        json.put("environment", ScenarioOptions.environment(atStart));
        Path file = dir.resolve(SCENARIO + ".json");
        JSON.writeValue(file.toFile(), json);
        new HtmlReport("Autoscaling live", "One model of emulated containers behind the gateway, autoscaled through "
                + "its process manager under stepped open-loop Poisson load. Answers are counted by the second they "
                + "were due to be sent; goodput counts predictions within the SLO.")
                .heading("Goodput per step, after its first " + settleS + " s")
                .table(List.of("rate /s", "seconds", "answers", "good %"), table)
                .image(png, "rate, goodput and replicas over time")
                .heading("Decisions (the last kept)")
                .table(List.of("at", "from", "to", "reason", "detail", "outcome"), decisions)
                .settings(settings(trace))
                .conditions(startedAt.toString(), ScenarioOptions.environment(atStart))
                .link(file, "all numbers (JSON)")
                .write(dir.resolve(SCENARIO + ".html"));
        spec.commandLine().getErr().printf("%s: report in %s%n", SCENARIO, dir);
    }

    private Map<String, Object> settings(RateTrace trace) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("steps", steps);
        s.put("warmupS", warmup.seconds);
        s.put("settleS", settleS);
        s.put("containers", "emulated (process manager, java -jar " + containerJar + "), beta " + cost.betaMs()
                + " ms, alpha " + cost.alphaMs() + " ms");
        s.put("sloMs", slo.ms());
        s.put("autoscaling", "envelope policy, replicas " + minReplicas + ".." + maxReplicas + ", cooldown "
                + cooldownS + " s, other settings default");
        s.put("arrivals", "open loop, " + ArrivalPattern.trace(trace, true).describe());
        s.put("inputLength", inputLength);
        s.put("maxConnections", connections.max);
        s.put("timeoutMs", requestTimeout.ms);
        s.put("seed", seed.seed());
        s.put("gatewayJar", gatewayOptions.jar.toString());
        s.put("gatewayJvmArgs", gatewayOptions.jvmArgs);
        s.put("gatewayArgs", gatewayOptions.gatewayArgs);
        return s;
    }
}
