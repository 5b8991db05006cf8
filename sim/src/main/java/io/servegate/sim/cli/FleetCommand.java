package io.servegate.sim.cli;

import io.servegate.sim.FleetResult;
import io.servegate.sim.FleetScenario;
import io.servegate.sim.ManyModelResult;
import io.servegate.sim.ManyModelScenario;
import io.servegate.sim.ModelPlacement;
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
 * {@code bin/sim fleet}: a fleet of gateways, each model version scheduled by its owner and
 * queries forwarded to it, against one central scheduler over every version and replica, on the
 * same arrivals: fleet goodput at each forwarding latency, and a failover's timeline.
 */
@Command(name = "fleet", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Compares a fleet of gateways (versions partitioned by owner, queries forwarded) with one central "
                + "scheduler, in virtual time.")
final class FleetCommand implements Callable<Integer> {

    @Mixin
    OutputOptions output;

    @Option(names = "--gateways", defaultValue = "8", description = "gateways in the fleet (default: ${DEFAULT-VALUE})")
    int gateways;

    @Option(names = "--replicas", defaultValue = "64", description = "multi-model replicas (default: ${DEFAULT-VALUE})")
    int replicas;

    @Option(names = "--rate", defaultValue = "8000", description = "total offered rate, queries/s, Poisson (default: ${DEFAULT-VALUE})")
    double rate;

    @Option(names = "--placement", defaultValue = "lru", description = "lru or static (default: ${DEFAULT-VALUE})")
    String placement;

    @Option(names = "--spread", defaultValue = "round-robin",
            description = "how arrivals are spread over the live gateways: round-robin or random (default: ${DEFAULT-VALUE})")
    String spread;

    @Option(names = "--forward-ms", split = ",", defaultValue = "0.5",
            description = "one-way latency of a forward between gateways; a list runs each (default: ${DEFAULT-VALUE})")
    List<Double> forwardMs;

    @Option(names = "--fail", description = "GATEWAY@S: gateway gN stops S seconds into the run")
    String fail;

    @Option(names = "--lease-s", defaultValue = "2.5",
            description = "seconds from a stop until its versions are granted to live gateways (default: ${DEFAULT-VALUE})")
    double leaseS;

    @Option(names = "--join-s", defaultValue = "-1",
            description = "the last gateway joins the others this many seconds into the run; prints the share of "
                    + "queries lost in the 10 s after it (default: there from the start)")
    double joinS;

    @Mixin
    ManyModelOptions models;

    @Override
    public Integer call() throws Exception {
        ManyModelScenario many = models.scenario(ModelPlacement.of(placement), replicas, rate);
        int failGateway = -1;
        double failAt = 0;
        if (fail != null) {
            String[] parts = fail.split("@");
            if (parts.length != 2 || !parts[0].startsWith("g")) {
                throw new IllegalArgumentException("--fail wants GATEWAY@SECONDS, e.g. g0@10");
            }
            failGateway = Integer.parseInt(parts[0].substring(1));
            failAt = Double.parseDouble(parts[1]);
        }
        ManyModelResult central = Simulation.run(many);
        List<Map<String, Object>> runs = new ArrayList<>();
        List<List<Object>> rows = new ArrayList<>();
        rows.add(row("central", "-", central.summary(), 1.0));
        System.out.printf(Locale.ROOT, "%-8s %8s %9s %9s %7s %9s %7s %8s %8s%n", "run", "fwd ms", "offered", "goodput",
                "ratio", "forwarded", "lost", "p50 ms", "p99 ms");
        print("central", "-", central.offeredRps(), central.goodputRps(), 1, 0, 0, central.stats().latencyMs(50),
                central.stats().latencyMs(99));
        Charts.Series fleetGoodput = new Charts.Series("fleet of " + gateways, new ArrayList<>(), new ArrayList<>());
        FleetResult first = null;
        for (double hop : forwardMs) {
            FleetResult r = Simulation.run(new FleetScenario(many, gateways, FleetScenario.Spread.of(spread), hop,
                    failGateway, failAt, leaseS, joinS));
            first = first == null ? r : first;
            double ratio = r.goodputRps() / central.goodputRps();
            Map<String, Object> s = r.summary();
            s.put("goodput_vs_central", Summary.round(ratio));
            runs.add(s);
            rows.add(row("fleet", hop, s, ratio));
            print("fleet", String.valueOf(hop), r.offeredRps(), r.goodputRps(), ratio, r.forwarded(), r.lost(),
                    r.atGateways().latencyMs(50), r.atGateways().latencyMs(99));
            if (joinS >= 0) {
                System.out.printf(Locale.ROOT, "  join of g%d at %.1f s: %.4f of the queries of the 10 s after it lost "
                        + "(not answered in time), %.4f over the run%n", gateways - 1, joinS,
                        r.lossShare((int) Math.ceil(joinS), 10), 1 - r.goodputRps() / r.offeredRps());
            }
            fleetGoodput.x().add(hop);
            fleetGoodput.y().add(r.goodputRps());
        }
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("settings", first.scenario().settings());
        summary.put("central", central.summary());
        summary.put("fleet", runs);
        Path dir = output.write("fleet", summary);
        if (dir != null) {
            report(dir, first, central, fleetGoodput, rows);
        }
        return 0;
    }

    private static void print(String name, String hop, double offered, double goodput, double ratio, long forwarded,
            long lost, double p50, double p99) {
        System.out.printf(Locale.ROOT, "%-8s %8s %9.1f %9.1f %7.3f %9d %7d %8.2f %8.2f%n", name, hop, offered, goodput,
                ratio, forwarded, lost, p50, p99);
    }

    private static List<Object> row(String name, Object hop, Map<String, Object> s, double ratio) {
        return List.of(name, hop, s.get("offered_rps"), s.get("goodput_rps"), Summary.round(ratio),
                s.getOrDefault("forwarded", 0), s.getOrDefault("lost_unowned", 0), String.valueOf(s.get("p50_ms")),
                String.valueOf(s.get("p99_ms")), s.get("cold_starts"));
    }

    private void report(Path dir, FleetResult first, ManyModelResult central, Charts.Series fleetGoodput,
            List<List<Object>> rows) throws Exception {
        List<Double> flat = fleetGoodput.x().stream().map(x -> central.goodputRps()).toList();
        Path png = Charts.lines(dir.resolve("fleet.png"), "Goodput, " + gateways + " gateways against one scheduler",
                "forward latency, one way (ms)", "goodput (answers in SLO/s)",
                List.of(fleetGoodput, new Charts.Series("central", fleetGoodput.x(), new ArrayList<>(flat))));
        HtmlReport page = new HtmlReport("A fleet of gateways against one central scheduler", "Each model version is "
                + "owned by one gateway (the core's OwnershipPlanner over the versions' arrival rates) and scheduled "
                + "there by a MultiModelScheduler over the replicas dealt to that gateway by owned load; a query that "
                + "arrives at another gateway is forwarded, paying the forward latency each way out of its deadline. "
                + "The central run is one MultiModelScheduler over every version and replica, on the same arrivals. "
                + "Goodput counts predictions that reached the gateway the query arrived at within its SLO.")
                .image(png, "goodput against forward latency")
                .heading("Runs")
                .table(List.of("run", "forward ms", "offered/s", "goodput/s", "vs central", "forwarded", "lost",
                        "p50 ms", "p99 ms", "cold starts"), rows);
        if (first.scenario().failGateway() >= 0) {
            Charts.Series good = new Charts.Series("answered in time", new ArrayList<>(), new ArrayList<>());
            Charts.Series arrived = new Charts.Series("arrived", new ArrayList<>(), new ArrayList<>());
            for (int s = 0; s < first.goodPerSecond().length; s++) {
                good.x().add((double) s);
                good.y().add((double) first.goodPerSecond()[s]);
                arrived.x().add((double) s);
                arrived.y().add((double) first.arrivedPerSecond()[s]);
            }
            Path timeline = Charts.lines(dir.resolve("fleet-failover.png"), "Failover of "
                    + first.scenario().settings().get("fail") + ", forward " + first.scenario().hopMs() + " ms",
                    "second of arrival", "queries", List.of(arrived, good));
            page.heading("Failover").image(timeline, "queries per second through the failover");
        }
        List<List<Object>> perGateway = new ArrayList<>();
        for (FleetResult.Gateway g : first.gateways()) {
            perGateway.add(List.of(g.name(), g.live(), g.versions(), g.replicas(), Summary.round(g.ownedRps()),
                    g.scheduled(), g.good()));
        }
        page.heading("Gateways (forward " + first.scenario().hopMs() + " ms)")
                .table(List.of("gateway", "live", "versions", "replicas", "owned q/s", "scheduled", "good"), perGateway)
                .heading("Settings").keyValues(first.scenario().settings())
                .heading("Run conditions").keyValues(Environment.now())
                .link(dir.resolve("fleet.json"), "all numbers (JSON)")
                .write(dir.resolve("fleet.html"));
    }
}
