package io.servegate.loadgen.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.servegate.loadgen.report.BenchmarkReport;
import io.servegate.loadgen.report.RunConditions;
import io.servegate.workload.report.HtmlReport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The selection scenario's report: the Fig. 8 reproduction and the Fig. 10 analogue (written by
 * the gateway test tree's {@code Fig8Benchmark}, see {@code bench/selection.sh}) copied into a
 * results folder with an HTML page in the same format as the other scenarios.
 */
@Command(name = "selection-report", mixinStandardHelpOptions = true,
        description = "HTML report of the Fig. 8 / Fig. 10 selection reproduction (its CSV, PNG and JSON files).")
public final class SelectionReportCommand implements Callable<Integer> {

    static final String SCENARIO = "selection";
    private static final ObjectMapper JSON = new ObjectMapper();

    @Spec
    CommandSpec spec;

    @Option(names = "--from", defaultValue = "bench/results",
            description = "Where Fig8Benchmark wrote fig8.{csv,png,json} and fig10.* (default ${DEFAULT-VALUE}).")
    Path from;

    @Mixin
    ResultsOption results;

    @Override
    public Integer call() throws Exception {
        if (!Files.isRegularFile(from.resolve("fig8.json"))) {
            throw new CommandLine.ParameterException(spec.commandLine(), "no fig8.json in " + from
                    + " (run bench/selection-fig8.sh first)");
        }
        Instant startedAt = Instant.now();
        Path dir = results.create(SCENARIO);
        HtmlReport page = new HtmlReport("Model selection (Clipper Fig. 8 and Fig. 10)", "Cumulative error of each "
                + "static model and of the selection policies, replayed on the real Fashion-MNIST ONNX models' outputs "
                + "through the gateway's policy classes; produced by bench/selection-fig8.sh (Fig8Benchmark).");
        Map<String, Object> env = BenchmarkReport.environmentOfThisJvm();
        env.put("loadAverage", RunConditions.now().loadAverage());
        page.conditions(startedAt.toString() + " (report); figures from "
                + Files.getLastModifiedTime(from.resolve("fig8.json")), env);
        for (String fig : List.of("fig8", "fig10")) {
            Path json = from.resolve(fig + ".json");
            if (!Files.isRegularFile(json)) {
                continue;
            }
            for (String ext : List.of("json", "csv", "png")) {
                Path f = from.resolve(fig + "." + ext);
                if (Files.isRegularFile(f)) {
                    Files.copy(f, dir.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
                }
            }
            JsonNode n = JSON.readTree(json.toFile());
            page.heading(fig.equals("fig8") ? "Figure 8: the best model fails, then recovers"
                    : "Figure 10 analogue: per-user vs app-wide selection");
            page.paragraph(n.path("description").asText(""));
            Map<String, Object> scalars = new LinkedHashMap<>();
            n.fields().forEachRemaining(e -> {
                if (!e.getValue().isContainerNode() && !e.getKey().equals("description")) {
                    scalars.put(e.getKey(), e.getValue().asText());
                } else if (e.getValue().isArray()) {
                    scalars.put(e.getKey(), e.getValue().toString());
                }
            });
            page.settings(scalars);
            if (Files.isRegularFile(dir.resolve(fig + ".png"))) {
                page.image(dir.resolve(fig + ".png"), fig);
            }
            table(page, "per series", n.path("series"));
            table(page, "over seeds", n.path("over_seed_pairs").path("series"));
            table(page, "mean final cumulative error over seeds", n.path("mean_final_over_seeds").path("series"));
            page.link(dir.resolve(fig + ".csv"), fig + ".csv (the curves)");
            page.link(dir.resolve(fig + ".json"), fig + ".json");
        }
        page.write(dir.resolve("index.html"));
        spec.commandLine().getOut().println("wrote " + dir.resolve("index.html"));
        return 0;
    }

    /** An object of series (name → object of numbers, or name → number) as a table. */
    private static void table(HtmlReport page, String caption, JsonNode series) throws IOException {
        if (!series.isObject() || series.isEmpty()) {
            return;
        }
        Set<String> columns = new LinkedHashSet<>();
        series.forEach(v -> {
            if (v.isObject()) {
                v.fieldNames().forEachRemaining(columns::add);
            }
        });
        List<String> headers = new ArrayList<>();
        headers.add(caption);
        headers.addAll(columns.isEmpty() ? List.of("value") : columns);
        List<List<Object>> rows = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = series.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> e = it.next();
            List<Object> row = new ArrayList<>();
            row.add(e.getKey());
            if (columns.isEmpty()) {
                row.add(cell(e.getValue()));
            } else {
                for (String c : columns) {
                    row.add(cell(e.getValue().get(c)));
                }
            }
            rows.add(row);
        }
        page.table(headers, rows);
    }

    private static Object cell(JsonNode v) {
        if (v == null || v.isNull()) {
            return null;
        }
        return v.isNumber() ? (Object) v.doubleValue() : v.isTextual() ? v.asText() : v.toString();
    }
}
