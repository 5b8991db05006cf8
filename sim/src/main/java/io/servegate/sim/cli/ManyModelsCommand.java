package io.servegate.sim.cli;

import io.servegate.sim.ManyModelResult;
import io.servegate.sim.ManyModelScenario;
import io.servegate.sim.ModelPlacement;
import io.servegate.sim.Simulation;
import io.servegate.sim.report.Environment;
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
 * {@code bin/sim many-models}: many model versions with Zipf popularity over a few multi-model
 * replicas, loaded on demand with LRU eviction against a static placement of the most popular
 * models with the same memory budget, at each offered rate: goodput, cold-start rate and p99.
 */
@Command(name = "many-models", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Compares on-demand loading with LRU eviction against a static placement, in virtual time.")
final class ManyModelsCommand implements Callable<Integer> {

    @Mixin
    OutputOptions output;

    @Option(names = "--placements", split = ",", defaultValue = "lru,static",
            description = "lru and/or static (default: ${DEFAULT-VALUE})")
    List<String> placements;

    @Option(names = "--replicas", defaultValue = "2", description = "multi-model replicas (default: ${DEFAULT-VALUE})")
    int replicas;

    @Option(names = "--rates", split = ",", defaultValue = "100,200,400,800,1600",
            description = "total offered rates, queries/s, Poisson (default: ${DEFAULT-VALUE})")
    List<Double> rates;

    @Mixin
    ManyModelOptions scenario;

    @Override
    public Integer call() throws Exception {
        ManyModelScenario base = scenario.scenario(ModelPlacement.LRU, replicas, rates.get(0));
        List<ModelPlacement> ps = placements.stream().map(ModelPlacement::of).toList();
        List<Map<String, Object>> runs = new ArrayList<>();
        List<List<Object>> rows = new ArrayList<>();
        Map<ModelPlacement, Charts.Series> goodput = new LinkedHashMap<>();
        Map<ModelPlacement, Charts.Series> p99 = new LinkedHashMap<>();
        System.out.printf(Locale.ROOT, "%-7s %9s %9s %6s %6s %8s %9s %9s %8s%n", "placement", "offered", "goodput",
                "good", "cold", "loads/s", "p50 ms", "p99 ms", "busy");
        for (ModelPlacement p : ps) {
            for (double rate : rates) {
                ManyModelResult r = Simulation.run(base.withPlacement(p).withRate(rate));
                Map<String, Object> s = r.summary();
                runs.add(s);
                System.out.printf(Locale.ROOT, "%-9s %9.1f %9.1f %6.3f %6.3f %8.1f %9.2f %9.2f %8.3f%n", p.id(),
                        r.offeredRps(), r.goodputRps(), s.get("good_share"), r.coldStartRate(),
                        r.loads() / base.durationS(), r.stats().latencyMs(50), r.stats().latencyMs(99),
                        s.get("replica_busy_fraction"));
                rows.add(List.of(p.id(), s.get("offered_rps"), s.get("goodput_rps"), s.get("good_share"),
                        s.get("cold_start_rate"), s.get("loads_per_s"), s.get("evictions"), String.valueOf(s.get("p50_ms")),
                        String.valueOf(s.get("p99_ms")), s.get("replica_busy_fraction")));
                series(goodput, p).x().add(r.offeredRps());
                series(goodput, p).y().add(r.goodputRps());
                if (!Double.isNaN(r.stats().latencyMs(99))) {
                    series(p99, p).x().add(r.offeredRps());
                    series(p99, p).y().add(r.stats().latencyMs(99));
                }
            }
        }
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("settings", base.settings());
        summary.put("runs", runs);
        Path dir = output.write("many-models", summary);
        if (dir != null) {
            Path good = Charts.lines(dir.resolve("many-models.png"), "Goodput, " + base.models() + " models over "
                    + replicas + " replicas", "offered load (queries/s)", "goodput (answers in SLO/s)",
                    List.copyOf(goodput.values()));
            Path tail = Charts.lines(dir.resolve("many-models-p99.png"), "p99 latency of answered predictions",
                    "offered load (queries/s)", "p99 (ms)", List.copyOf(p99.values()));
            new HtmlReport("Many models on shared replicas", "The core's MultiModelScheduler in virtual time: "
                    + "on-demand loading with LRU eviction (lru) against a static placement of the most popular "
                    + "models with the same memory budget (static; queries for the other models get the default "
                    + "at once). Goodput counts predictions answered within their SLO; a cold start is a query "
                    + "whose model no replica held when it arrived; p99 is over answered predictions.")
                    .image(good, "goodput").image(tail, "p99")
                    .heading("Runs")
                    .table(List.of("placement", "offered/s", "goodput/s", "good share", "cold-start rate", "loads/s",
                            "evictions", "p50 ms", "p99 ms", "replica busy"), rows)
                    .heading("Settings").keyValues(base.settings())
                    .heading("Run conditions").keyValues(Environment.now())
                    .link(dir.resolve("many-models.json"), "all numbers (JSON)")
                    .write(dir.resolve("many-models.html"));
        }
        return 0;
    }

    private static Charts.Series series(Map<ModelPlacement, Charts.Series> m, ModelPlacement p) {
        return m.computeIfAbsent(p, k -> new Charts.Series(k.id(), new ArrayList<>(), new ArrayList<>()));
    }
}
