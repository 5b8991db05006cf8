package io.servegate.sim.cli;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.sim.SimResult;
import io.servegate.sim.Simulation;
import io.servegate.sim.report.Environment;
import io.servegate.sim.report.Summary;
import io.servegate.workload.report.Charts;
import io.servegate.workload.report.HtmlReport;
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
 * {@code bin/sim sweep}: one run per combination of policies, rates, SLOs and replica counts
 * (the other options as for a single run), with one plot of goodput against the first swept
 * dimension among rate, SLO and replicas. A single-replica rate sweep also plots the analytic
 * optimum.
 */
@Command(name = "sweep", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Runs a grid of scenarios and plots goodput against the swept value.")
final class SweepCommand implements Callable<Integer> {

    @Mixin
    SimOptions options;

    @Mixin
    OutputOptions output;

    @Option(names = "--policies", split = ",", description = "policies to compare (default: --policy)")
    List<String> policies;

    @Option(names = "--loads", split = ",", description = "offered rates as multiples of --rate")
    List<Double> loads;

    @Option(names = "--rates", split = ",", description = "offered rates, queries/s")
    List<Double> rates;

    @Option(names = "--slos-ms", split = ",", description = "SLOs to sweep (each run gives every model this one)")
    List<Double> slos;

    @Option(names = "--replica-counts", split = ",", description = "replica counts to sweep")
    List<Integer> replicaCounts;

    private enum Axis { RATE, SLO, REPLICAS }

    @Override
    public Integer call() throws Exception {
        List<String> ps = policies != null ? policies : List.of(options.policy);
        List<Double> rs = rates != null ? rates
                : loads != null ? loads.stream().map(l -> l * options.rate).toList() : List.of(options.rate);
        List<Double> ss = slos != null ? slos : List.of(options.sloMs[0]);
        List<Integer> ns = replicaCounts != null ? replicaCounts : List.of(options.replicas);
        Axis axis = rs.size() > 1 || (ss.size() == 1 && ns.size() == 1) ? Axis.RATE : ss.size() > 1 ? Axis.SLO : Axis.REPLICAS;

        List<Map<String, Object>> runs = new ArrayList<>();
        Map<String, Charts.Series> series = new LinkedHashMap<>();
        for (String p : ps) {
            for (double slo : ss) {
                for (int n : ns) {
                    for (double rate : rs) {
                        ScenarioBuilder b = options.builder().policy(PolicyKind.of(p)).rate(rate).replicas(n);
                        if (slos != null) {
                            b.sloMs(slo);
                        }
                        SimResult r = Simulation.run(b.build());
                        System.out.printf(Locale.ROOT, "%-9s slo %5.1f ms  replicas %3d  %s%n", p, slo, n, Summary.line(r));
                        runs.add(Summary.of(r));
                        double x = switch (axis) {
                            case RATE -> r.offeredRps();
                            case SLO -> slo;
                            case REPLICAS -> n;
                        };
                        String name = p + (axis != Axis.SLO && ss.size() > 1 ? ", SLO " + slo + " ms" : "")
                                + (axis != Axis.REPLICAS && ns.size() > 1 ? ", " + n + " replicas" : "")
                                + (axis != Axis.RATE && rs.size() > 1 ? ", " + rate + "/s" : "");
                        Charts.Series s = series.computeIfAbsent(name,
                                k -> new Charts.Series(k, new ArrayList<>(), new ArrayList<>()));
                        s.x().add(x);
                        s.y().add(r.goodputRps());
                    }
                }
            }
        }
        boolean optimum = axis == Axis.RATE && ns.equals(List.of(1)) && ss.size() == 1 && options.models == 1
                && options.profile == null && "central".equals(options.coordination.trim());
        if (optimum) {
            ScenarioBuilder b = options.builder().sloMs(ss.get(0));
            Charts.Series s = new Charts.Series("analytic optimum", new ArrayList<>(), new ArrayList<>());
            for (double rate : rs) {
                s.x().add(rate);
                s.y().add(b.analyticOneReplicaOptimum(rate));
            }
            series.put(s.name(), s);
        }
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("swept", Map.of("policies", ps, "rates", rs, "slos_ms", ss, "replicas", ns));
        summary.put("runs", runs);
        Path dir = output.write("sweep", summary);
        if (dir != null) {
            String xTitle = switch (axis) {
                case RATE -> "offered load (queries/s)";
                case SLO -> "SLO (ms)";
                case REPLICAS -> "replicas";
            };
            Path png = Charts.lines(dir.resolve("sweep.png"), "Goodput", xTitle, "goodput (answers in SLO/s)",
                    List.copyOf(series.values()));
            List<List<Object>> rows = new ArrayList<>();
            for (Map<String, Object> run : runs) {
                Map<?, ?> st = (Map<?, ?>) run.get("settings");
                rows.add(List.of(st.get("policy"), st.get("slo_ms"), st.get("replicas"), run.get("offered_rps"),
                        run.get("goodput_rps"), run.get("late"), run.get("mean_batch"), String.valueOf(run.get("p99_ms")),
                        run.get("replica_idle_fraction")));
            }
            new HtmlReport("Simulated sweep", "One simulated run per setting; goodput counts predictions answered "
                    + "within their SLO." + (optimum ? " The analytic optimum is issue 12's single-replica bound "
                    + "(the largest b with λ·(SLO − ℓ(b)) ≥ b, at b/ℓ(b), at most λ)." : ""))
                    .image(png, "goodput").heading("Runs")
                    .table(List.of("policy", "SLO ms", "replicas", "offered/s", "goodput/s", "late", "mean batch",
                            "p99 ms", "idle"), rows)
                    .heading("Settings").keyValues((Map<?, ?>) runs.get(0).get("settings"))
                    .heading("Run conditions").keyValues(Environment.now())
                    .link(dir.resolve("sweep.json"), "all numbers (JSON)")
                    .write(dir.resolve("sweep.html"));
        }
        return 0;
    }
}
