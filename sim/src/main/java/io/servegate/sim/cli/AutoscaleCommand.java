package io.servegate.sim.cli;

import io.servegate.core.autoscaling.AutoscalerConfig;
import io.servegate.core.autoscaling.AutoscalingPolicy;
import io.servegate.core.autoscaling.CapacityModel;
import io.servegate.core.autoscaling.ScalingDecision;
import io.servegate.core.scheduling.PolicyKind;
import io.servegate.sim.Autoscaling;
import io.servegate.sim.SimResult;
import io.servegate.sim.Simulation;
import io.servegate.sim.report.Environment;
import io.servegate.sim.ScalingTrace;
import io.servegate.sim.workload.ScalingWorkloads;
import io.servegate.workload.arrival.RateTrace;
import io.servegate.workload.report.Charts;
import io.servegate.workload.report.HtmlReport;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bin/sim autoscale}: the core's autoscaler on a day-like trace and on load steps, each
 * against static provisioning for the trace's peak (the replicas the capacity model gives for
 * the busiest second at the same utilisation), the same seed and arrivals.
 */
@Command(name = "autoscale", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Runs the autoscaler on a day-like trace and on load steps, against static provisioning for the peak.")
final class AutoscaleCommand implements Callable<Integer> {

    @Option(names = "--workload", defaultValue = "day,step", split = ",", description = "day and/or step (default: ${DEFAULT-VALUE})")
    List<String> workloads;

    @Option(names = "--peak-rps", defaultValue = "10000", description = "day: the rate at midday (default: ${DEFAULT-VALUE})")
    double peak;

    @Option(names = "--day-s", defaultValue = "3600", description = "day: its length in virtual seconds (default: ${DEFAULT-VALUE})")
    int daySeconds;

    @Option(names = "--steps", defaultValue = "200:60,3000:60,200:90", split = ",",
            description = "step: RATE:SECONDS, in order (default: ${DEFAULT-VALUE})")
    List<String> steps;

    @Option(names = "--policy", defaultValue = "symphony", description = "scheduling policy (default: ${DEFAULT-VALUE})")
    String policy;

    @Option(names = "--beta-ms", defaultValue = "5", description = "replica: fixed cost of a batch (default: ${DEFAULT-VALUE})")
    double betaMs;

    @Option(names = "--alpha-ms", defaultValue = "0.5", description = "replica: cost per query (default: ${DEFAULT-VALUE})")
    double alphaMs;

    @Option(names = "--overhead-ms", defaultValue = "1", description = "round-trip transport overhead (default: ${DEFAULT-VALUE})")
    double overheadMs;

    @Option(names = "--slo-ms", defaultValue = "50", description = "SLO (default: ${DEFAULT-VALUE})")
    double sloMs;

    @Option(names = "--max-batch", defaultValue = "256", description = "batch ceiling (default: ${DEFAULT-VALUE})")
    int maxBatch;

    @Option(names = "--min", defaultValue = "1", description = "min_replicas (default: ${DEFAULT-VALUE})")
    int min;

    @Option(names = "--max", defaultValue = "32", description = "max_replicas (default: ${DEFAULT-VALUE})")
    int max;

    @Option(names = "--scaling-policy", defaultValue = "envelope", description = "envelope or signals (default: ${DEFAULT-VALUE})")
    String scalingPolicy;

    @Option(names = "--utilisation", defaultValue = "0.75", description = "share of the capacity planned for (default: ${DEFAULT-VALUE})")
    double utilisation;

    @Option(names = "--bad-rate", defaultValue = "0.05", description = "bad-rate threshold (default: ${DEFAULT-VALUE})")
    double badRate;

    @Option(names = "--idle", defaultValue = "0.3", description = "idle-fraction threshold (default: ${DEFAULT-VALUE})")
    double idle;

    @Option(names = "--cooldown-s", defaultValue = "15", description = "scale-down cooldown (default: ${DEFAULT-VALUE})")
    double cooldownS;

    @Option(names = "--settle-s", defaultValue = "5", description = "wait between bad-rate scale-ups (default: ${DEFAULT-VALUE})")
    double settleS;

    @Option(names = "--start-s", defaultValue = "2", description = "a new replica's start time (default: ${DEFAULT-VALUE})")
    double startS;

    @Option(names = "--tick-s", defaultValue = "1", description = "autoscaler period (default: ${DEFAULT-VALUE})")
    double tickS;

    @Option(names = "--seed", defaultValue = "1", description = "random seed (default: ${DEFAULT-VALUE})")
    long seed;

    @Mixin
    OutputOptions output;

    /** One workload's autoscaled and static runs. */
    record Outcome(String workload, RateTrace trace, int staticReplicas, SimResult scaled, SimResult fixed) {

        ScalingTrace scaling() {
            return scaled.models().get(0).stats().scaling();
        }

        double goodShare(SimResult r) {
            return (double) r.total().good() / r.total().arrived();
        }

        double staticReplicaSeconds() {
            return staticReplicas * fixed.seconds();
        }
    }

    @Override
    public Integer call() throws Exception {
        List<Outcome> outcomes = new ArrayList<>();
        for (String w : workloads) {
            outcomes.add(run(w.trim().toLowerCase(Locale.ROOT)));
        }
        for (Outcome o : outcomes) {
            System.out.printf(Locale.ROOT,
                    "%s: autoscaled goodput %.1f %% of offered, %.0f replica-s (%.0f %% of static %d replicas: %.0f"
                            + " replica-s, goodput %.1f %%), peak %d replicas, %d decisions%n",
                    o.workload(), 100 * o.goodShare(o.scaled()), o.scaling().replicaSeconds(),
                    100 * o.scaling().replicaSeconds() / o.staticReplicaSeconds(), o.staticReplicas(),
                    o.staticReplicaSeconds(), 100 * o.goodShare(o.fixed()), o.scaling().peakReplicas(),
                    o.scaling().decisions().size());
        }
        report(outcomes);
        return 0;
    }

    Outcome run(String workload) {
        RateTrace trace = switch (workload) {
            case "day" -> ScalingWorkloads.day(peak, daySeconds, seed);
            case "step" -> {
                double[] rates = new double[steps.size()];
                int[] seconds = new int[steps.size()];
                for (int i = 0; i < steps.size(); i++) {
                    String[] p = steps.get(i).trim().split(":");
                    if (p.length != 2) {
                        throw new IllegalArgumentException("--steps wants RATE:SECONDS, got " + steps.get(i));
                    }
                    rates[i] = Double.parseDouble(p[0]);
                    seconds[i] = Integer.parseInt(p[1]);
                }
                yield ScalingWorkloads.steps(rates, seconds);
            }
            default -> throw new IllegalArgumentException("--workload is day or step, got " + workload);
        };
        AutoscalerConfig config = new AutoscalerConfig(min, max, AutoscalingPolicy.of(scalingPolicy), utilisation,
                badRate, idle, Math.round(cooldownS * 1e9), Math.round(settleS * 1e9), 0);
        int staticReplicas = Math.min(max, capacityModel().replicasFor(ScalingWorkloads.peak(trace), utilisation, max));
        SimResult scaled = Simulation.run(base(trace).replicas(min)
                .autoscaling(new Autoscaling(config, Math.round(startS * 1e9), Math.round(tickS * 1e9))).build());
        SimResult fixed = Simulation.run(base(trace).replicas(staticReplicas).build());
        return new Outcome(workload, trace, staticReplicas, scaled, fixed);
    }

    /** What the capacity model says of these replicas, with the profile the scheduler will learn. */
    CapacityModel capacityModel() {
        return new CapacityModel(b -> Math.round((betaMs + alphaMs * b + overheadMs) * 1e6), Math.round(sloMs * 1e6),
                maxBatch);
    }

    private ScenarioBuilder base(RateTrace trace) {
        return new ScenarioBuilder().policy(PolicyKind.of(policy)).linear(betaMs, alphaMs, 0).overheadMs(overheadMs)
                .sloMs(sloMs).batchSizes(-1, maxBatch).trace(trace).rate(trace.meanRate())
                .durationS(trace.durationNanos() / 1e9).seed(seed);
    }

    private void report(List<Outcome> outcomes) throws Exception {
        Map<String, Object> summary = new LinkedHashMap<>();
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Outcome o : outcomes) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("workload", o.workload());
            row.put("trace", o.trace().source());
            row.put("offered_mean_rps", o.scaled().offeredRps());
            row.put("peak_rps", ScalingWorkloads.peak(o.trace()));
            row.put("autoscaled_goodput_share", o.goodShare(o.scaled()));
            row.put("autoscaled_replica_seconds", o.scaling().replicaSeconds());
            row.put("autoscaled_peak_replicas", o.scaling().peakReplicas());
            row.put("static_replicas", o.staticReplicas());
            row.put("static_goodput_share", o.goodShare(o.fixed()));
            row.put("static_replica_seconds", o.staticReplicaSeconds());
            row.put("replica_seconds_ratio", o.scaling().replicaSeconds() / o.staticReplicaSeconds());
            row.put("decisions", o.scaling().decisions().stream().map(AutoscaleCommand::describe).toList());
            rows.add(row);
        }
        summary.put("runs", rows);
        summary.put("settings", settings());
        Path dir = output.write("autoscale", summary);
        if (dir == null) {
            return;
        }
        HtmlReport page = new HtmlReport("Autoscaling in simulation", "The core's autoscaler and schedulers in virtual "
                + "time; replica-seconds count each replica from the decision that asked for it until it has "
                + "drained; static provisioning is the capacity model's replicas for the busiest second.");
        List<List<Object>> table = new ArrayList<>();
        for (Outcome o : outcomes) {
            table.add(List.of(o.workload(), o.scaled().offeredRps(), 100 * o.goodShare(o.scaled()),
                    o.scaling().replicaSeconds(), o.staticReplicas(), 100 * o.goodShare(o.fixed()),
                    o.staticReplicaSeconds(), 100 * o.scaling().replicaSeconds() / o.staticReplicaSeconds()));
        }
        page.heading("Results").table(List.of("workload", "offered mean /s", "autoscaled goodput %",
                "autoscaled replica-s", "static replicas", "static goodput %", "static replica-s",
                "replica-s, % of static"), table);
        for (Outcome o : outcomes) {
            Path png = chart(dir.resolve("autoscale-" + o.workload() + ".png"),
                    "Autoscaled, " + o.workload() + ": rates and replicas", o.scaling().samples());
            page.heading(o.workload()).paragraph(o.trace().source()).image(png, o.workload());
        }
        page.heading("Settings").keyValues(settings());
        page.heading("Run conditions").keyValues(Environment.now());
        page.link(dir.resolve("autoscale.json"), "all numbers (JSON)");
        page.write(dir.resolve("autoscale.html"));
    }

    private static String describe(ScalingDecision d) {
        return String.format(Locale.ROOT, "%.0f s: %d -> %d (%s) %s", d.atNanos() / 1e9, d.from(), d.to(),
                d.reason().id(), d.detail());
    }

    private Map<String, Object> settings() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("policy", policy);
        s.put("latency", String.format(Locale.ROOT, "%.3f + %.3f·b ms, overhead %.3f ms", betaMs, alphaMs, overheadMs));
        s.put("slo_ms", sloMs);
        s.put("max_batch", maxBatch);
        s.put("autoscaler", String.format(Locale.ROOT,
                "%s, replicas %d..%d, utilisation %.2f, bad rate %.2f, idle %.2f, cooldown %.0f s, settle %.0f s,"
                        + " start %.1f s, tick %.1f s", scalingPolicy, min, max, utilisation, badRate, idle,
                cooldownS, settleS, startS, tickS));
        s.put("seed", seed);
        return s;
    }

    /** An autoscaled run over time: offered and good rates on the left axis, replicas on the right. */
    private static Path chart(Path file, String title, List<ScalingTrace.Sample> samples) throws IOException {
        List<Double> t = samples.stream().map(ScalingTrace.Sample::atS).toList();
        return Charts.twoAxes(file, title, "time (s)", "queries/s", List.of(
                        new Charts.Series("offered", t, samples.stream().map(ScalingTrace.Sample::offeredRps).toList()),
                        new Charts.Series("goodput", t, samples.stream().map(ScalingTrace.Sample::goodRps).toList())),
                "replicas", new Charts.Series("replicas", t, samples.stream().map(s -> (double) s.replicas()).toList()));
    }
}
