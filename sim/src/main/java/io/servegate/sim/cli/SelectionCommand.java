package io.servegate.sim.cli;

import io.servegate.core.selection.SelectionPolicies;
import io.servegate.sim.selection.SyntheticOutputs.Accuracy;
import io.servegate.sim.report.Summary;
import io.servegate.sim.selection.ErrorCurve;
import io.servegate.sim.selection.SelectionRun;
import io.servegate.sim.selection.SyntheticOutputs;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/sim selection}: selection policies over synthetic models ({@link SyntheticOutputs})
 * with immediate feedback ({@link SelectionRun}); prints each policy's and each static model's
 * error.
 */
@Command(name = "selection", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Runs model selection policies over synthetic models with given accuracies and prints their error.")
final class SelectionCommand implements Callable<Integer> {

    private static final Pattern DROP = Pattern.compile("m(\\d+)@(\\d+)-(\\d+):([0-9.]+)");

    @Option(names = "--policies", split = ",", defaultValue = "exp3,exp4",
            description = "selection policies, with their defaults: single, exp3, exp4 (default: ${DEFAULT-VALUE})")
    List<String> policies;

    @Option(names = "--accuracies", split = ",", defaultValue = "0.9,0.8,0.7",
            description = "one model per value (m0, m1, ...), right this often (default: ${DEFAULT-VALUE})")
    List<Double> accuracies;

    @Option(names = "--drop", description = "model m<i> is right only this often for queries [FROM, TO), "
            + "e.g. m0@2000-4000:0.1; repeatable")
    List<String> drops = new ArrayList<>();

    @Option(names = "--queries", defaultValue = "10000", description = "queries (default: ${DEFAULT-VALUE})")
    int queries;

    @Option(names = "--classes", defaultValue = "10", description = "label classes (default: ${DEFAULT-VALUE})")
    int classes;

    @Option(names = "--contexts", defaultValue = "1",
            description = "contexts (users), each with its own state when more than 1 (default: ${DEFAULT-VALUE})")
    int contexts;

    @Option(names = "--seed", defaultValue = "1", description = "random seed (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--json", description = "write the JSON summary to this file")
    Path json;

    @Override
    public Integer call() throws Exception {
        Map<String, Accuracy> models = new LinkedHashMap<>();
        for (int i = 0; i < accuracies.size(); i++) {
            models.put("m" + i, Accuracy.constant(accuracies.get(i)));
        }
        for (String d : drops) {
            Matcher m = DROP.matcher(d);
            if (!m.matches() || !models.containsKey("m" + m.group(1))) {
                throw new IllegalArgumentException("--drop must be m<i>@FROM-TO:ACCURACY for a model m<i>, got " + d);
            }
            models.computeIfPresent("m" + m.group(1), (k, a) -> a.except(Integer.parseInt(m.group(2)),
                    Integer.parseInt(m.group(3)), Double.parseDouble(m.group(4))));
        }
        SelectionRun run = new SelectionRun(List.copyOf(models.keySet()),
                SyntheticOutputs.queries(queries, contexts, classes, seed), new SyntheticOutputs(models, classes, seed));
        List<ErrorCurve> curves = new ArrayList<>(run.staticModels());
        for (String p : policies) {
            curves.add(run.run(p, SelectionPolicies.create(p, Map.of()), seed, contexts > 1));
        }
        int[] quarters = {0, queries / 4, queries / 2, 3 * queries / 4, queries};
        System.out.print(ErrorCurve.table("Error rate (cumulative, per quarter)", curves, quarters));
        if (json != null) {
            Summary.write(summary(curves, quarters), json);
        }
        return 0;
    }

    private Map<String, Object> summary(List<ErrorCurve> curves, int[] windows) {
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("policies", policies);
        settings.put("accuracies", accuracies);
        settings.put("drops", drops);
        settings.put("queries", queries);
        settings.put("classes", classes);
        settings.put("contexts", contexts);
        settings.put("seed", seed);
        Map<String, Object> results = new LinkedHashMap<>();
        for (ErrorCurve c : curves) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("final_error", c.last());
            row.put("errors", c.errors());
            Map<String, Object> w = new LinkedHashMap<>();
            for (int i = 0; i + 1 < windows.length; i++) {
                w.put("[" + windows[i] + "," + windows[i + 1] + ")", c.window(windows[i], windows[i + 1]));
            }
            row.put("window_error", w);
            results.put(c.name(), row);
        }
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("settings", settings);
        summary.put("curves", results);
        return summary;
    }
}
