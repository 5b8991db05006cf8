package io.servegate.sim.cli;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.sim.SimResult;
import io.servegate.sim.Simulation;
import io.servegate.sim.report.Environment;
import io.servegate.sim.report.Summary;
import io.servegate.sim.report.Table4;
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
 * {@code bin/sim table4}: Symphony's Table 4, ResNet50 row (see {@link Table4}): the two analytic
 * rows on uniform arrivals, then each policy under Poisson arrivals beside the paper's measured
 * goodput.
 */
@Command(name = "table4", mixinStandardHelpOptions = true,
        description = "Reproduces Symphony's Table 4 (ResNet50 row, 8 replicas) in virtual time.")
final class Table4Command implements Callable<Integer> {

    @Mixin
    OutputOptions output;

    @Option(names = "--seed", defaultValue = "1", description = "random seed (default: ${DEFAULT-VALUE})")
    long seed;

    private record Row(String configuration, String arrivals, Integer analyticBatch, Double analyticRps,
            Double paperRps, ScenarioBuilder scenario) {
    }

    @Override
    public Integer call() throws Exception {
        ScenarioBuilder.Arrivals uniform = ScenarioBuilder.Arrivals.UNIFORM;
        ScenarioBuilder.Arrivals poisson = ScenarioBuilder.Arrivals.POISSON;
        List<Row> rows = List.of(
                new Row("no coordination: 8 × clipper at b = 7", "uniform",
                        Table4.uncoordinatedBatch(), Table4.uncoordinatedThroughput(), null,
                        Table4.uncoordinated(uniform, seed)),
                new Row("staggered: symphony over 8", "uniform", Table4.staggeredBatch(),
                        Table4.staggeredThroughput(), null, Table4.staggered(PolicyKind.SYMPHONY, uniform, seed)),
                new Row("symphony over 8", "poisson", null, null, Table4.SYMPHONY_MEASURED,
                        Table4.staggered(PolicyKind.SYMPHONY, poisson, seed)),
                new Row("clockwork over 8", "poisson", null, null, Table4.CLOCKWORK_MEASURED,
                        Table4.staggered(PolicyKind.CLOCKWORK, poisson, seed)),
                new Row("clipper (AIMD) over 8", "poisson", null, null, null,
                        Table4.staggered(PolicyKind.CLIPPER, poisson, seed)),
                new Row("no coordination: 8 × clipper at b = 7 (Nexus-like)", "poisson", null, null,
                        Table4.NEXUS_MEASURED, Table4.uncoordinated(poisson, seed)),
                new Row("no coordination: 8 × symphony", "poisson", null, null, null,
                        Table4.uncoordinated(poisson, seed).policy(PolicyKind.SYMPHONY).batchSizes(-1, 256)));

        List<String> headers = List.of("configuration", "arrivals", "offered r/s", "analytic BS", "analytic r/s",
                "sim goodput r/s", "sim / analytic", "sim mean BS", "paper measured r/s");
        List<List<Object>> table = new ArrayList<>();
        List<Map<String, Object>> runs = new ArrayList<>();
        System.out.printf(Locale.ROOT, "%-52s %-8s %9s %4s %9s %9s %7s %6s %9s%n", "configuration", "arrivals",
                "offered", "BS", "analytic", "goodput", "ratio", "sim BS", "paper");
        for (Row row : rows) {
            SimResult r = Simulation.run(row.scenario().build());
            double ratio = row.analyticRps() == null ? Double.NaN : r.goodputRps() / row.analyticRps();
            System.out.printf(Locale.ROOT, "%-52s %-8s %9.0f %4s %9s %9.0f %7s %6.2f %9s%n", row.configuration(),
                    row.arrivals(), r.offeredRps(), text(row.analyticBatch()), text(row.analyticRps()),
                    r.goodputRps(), Double.isNaN(ratio) ? "-" : String.format(Locale.ROOT, "%.3f", ratio),
                    r.total().meanBatchSize(), text(row.paperRps()));
            table.add(java.util.Arrays.asList(row.configuration(), row.arrivals(), Summary.round(r.offeredRps()),
                    row.analyticBatch(), row.analyticRps() == null ? null : Summary.round(row.analyticRps()),
                    Summary.round(r.goodputRps()), Summary.round(ratio), Summary.round(r.total().meanBatchSize()),
                    row.paperRps()));
            Map<String, Object> run = new LinkedHashMap<>();
            run.put("configuration", row.configuration());
            run.put("analytic_batch", row.analyticBatch());
            run.put("analytic_rps", row.analyticRps());
            run.put("paper_measured_rps", row.paperRps());
            run.putAll(Summary.of(r));
            runs.add(run);
        }
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("table4", runs);
        Path dir = output.write("table4", summary);
        if (dir != null) {
            List<String> names = new ArrayList<>();
            List<Double> goodput = new ArrayList<>();
            for (Map<String, Object> run : runs) {
                names.add(((String) run.get("configuration")).replaceAll(" \\(.*", "") + ", "
                        + ((Map<?, ?>) run.get("settings")).get("arrivals"));
                goodput.add(((Number) run.get("goodput_rps")).doubleValue());
            }
            Path png = dir.resolve("table4.png");
            Charts.bars(png, "Table 4, ResNet50 row: simulated goodput", "goodput (r/s)", names, goodput);
            new HtmlReport("Symphony Table 4 in virtual time", "ResNet50 row: 8 replicas, α 1.053 ms, β 5.072 ms, "
                    + "SLO 25 ms, no transport overhead, 10 s per run. Uniform rows are offered their analytic "
                    + "throughput; Poisson rows the staggered one (5,839 r/s), except the uncoordinated ones (4,501 r/s).")
                    .table(headers, table).image(png, "goodput per configuration")
                    .heading("Run conditions").keyValues(Environment.now())
                    .link(dir.resolve("table4.json"), "all numbers (JSON)")
                    .write(dir.resolve("table4.html"));
        }
        return 0;
    }

    private static String text(Number n) {
        return n == null ? "-" : String.format(Locale.ROOT, "%.0f", n.doubleValue());
    }
}
