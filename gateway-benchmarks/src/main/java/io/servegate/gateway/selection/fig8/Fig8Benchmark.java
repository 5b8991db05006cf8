package io.servegate.gateway.selection.fig8;

import static io.servegate.gateway.selection.fig8.SelectionReplay.ALL_MODELS;
import static io.servegate.gateway.selection.fig8.SelectionReplay.CNN;
import static io.servegate.gateway.selection.fig8.SelectionReplay.MLP;

import io.servegate.gateway.bench.BenchOutput;
import io.servegate.gateway.bench.BenchOutput.Args;
import io.servegate.gateway.bench.BenchOutput.Marker;
import io.servegate.core.selection.Exp3Policy;
import io.servegate.core.selection.Exp4Policy;
import io.servegate.core.selection.SelectionPolicies;
import io.servegate.core.selection.SelectionPolicy;
import io.servegate.gateway.selection.fig8.SelectionReplay.Corruption;
import io.servegate.sim.selection.ErrorCurve;
import io.servegate.sim.selection.SelectionRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Clipper NSDI'17 Figure 8 at the paper's scale, and a Figure 10 analogue, replayed by
 * {@link SelectionReplay} on the four real Fashion-MNIST ONNX models' outputs through the real
 * policy classes, exactly as the gateway's {@code SelectionService} runs them (immediate feedback).
 * A benchmark: it reports, it asserts nothing.
 *
 * <p><b>Figure 8</b>: {@code --queries} (20,000) sequential queries; the best model (fmnist-cnn)
 * answers uniformly random labels for queries [{@code --fail-from}, {@code --fail-to})
 * ([5,000, 10,000)), then recovers. Series: each static model, Exp3 (defaults), Exp3
 * ({@code η = 0.2}) and Exp4 (defaults). One scenario/policy seed pair for the curves
 * ({@code --scenario-seed}, {@code --policy-seed}), plus the mean, min and max final error over
 * {@code --seeds} seed pairs (s, s) for s = 1..N, since a single Exp3 run is noisy.
 *
 * <p><b>Figure 10 analogue</b> (personalization, as PersonalizationTest at full scale):
 * {@code --users} (20) users, each query from one drawn uniformly; for users 0..9 fmnist-cnn
 * answers random labels for the whole run, for users 10..19 fmnist-mlp does. Series: the static
 * models, Exp3 and Exp4 (defaults) with one state per user and with one app-wide state. Curves
 * from seed 1; the means over {@code --fig10-seeds} seeds in the summary.
 *
 * <p>Writes {@code fig8.csv}, {@code fig8.png}, {@code fig8.json}, {@code fig10.csv},
 * {@code fig10.png} and {@code fig10.json} under {@code --out}, and prints tables. The model
 * files are read from {@code ../containers/onnx/models}: run it from the {@code gateway}
 * directory (bench/selection-fig8.sh does).
 *
 * <p>CSV columns: {@code query} (queries answered so far, 1..N) and, per series, the cumulative
 * error rate over those queries (Clipper's "cumulative average error").
 */
public final class Fig8Benchmark {

    private Fig8Benchmark() {
    }

    public static void main(String[] argv) throws Exception {
        Args args = new Args(argv, "out", "queries", "fail-from", "fail-to", "scenario-seed", "policy-seed",
                "seeds", "fig10-queries", "users", "fig10-seeds");
        Path out = Path.of(args.string("out", "../bench/results"));
        int queries = args.integer("queries", 20_000);
        int failFrom = args.integer("fail-from", 5_000);
        int failTo = args.integer("fail-to", 10_000);
        if (!(0 <= failFrom && failFrom < failTo && failTo < queries)) {
            throw new IllegalArgumentException("need 0 <= --fail-from < --fail-to < --queries, got " + failFrom + ", "
                    + failTo + ", " + queries);
        }
        long scenarioSeed = args.number("scenario-seed", 1);
        long policySeed = args.number("policy-seed", 1);
        int seeds = args.integer("seeds", 10);
        int fig10Queries = args.integer("fig10-queries", 20_000);
        int users = args.integer("users", 20);
        int fig10Seeds = args.integer("fig10-seeds", 3);
        if (!Files.isDirectory(SelectionReplay.MODELS_DIR)) {
            throw new IllegalStateException("no models at " + SelectionReplay.MODELS_DIR.toAbsolutePath()
                    + ": run from the gateway directory");
        }
        Files.createDirectories(out);

        long start = System.nanoTime();
        for (String m : ALL_MODELS) {
            SelectionReplay.predictions(m);
        }
        System.out.printf(Locale.ROOT, "model outputs on the 10,000 test images computed in %.1f s%n",
                (System.nanoTime() - start) / 1e9);

        fig8(out, queries, failFrom, failTo, scenarioSeed, policySeed, seeds);
        fig10(out, fig10Queries, users, fig10Seeds);
    }

    // ------------------------------------------------------------------------------------------

    private record Policy(String name, Supplier<SelectionPolicy<?>> create) {
    }

    private static final List<Policy> FIG8_POLICIES = List.of(
            new Policy("exp3 (default)", () -> SelectionPolicies.create(Exp3Policy.NAME, Map.of())),
            new Policy("exp3 (eta=0.2)", () -> SelectionPolicies.create(Exp3Policy.NAME, Map.of("eta", 0.2))),
            new Policy("exp4 (default)", () -> SelectionPolicies.create(Exp4Policy.NAME, Map.of())));

    private static void fig8(Path out, int queries, int failFrom, int failTo, long scenarioSeed, long policySeed,
            int seeds) throws Exception {
        long start = System.nanoTime();
        List<Corruption> corruption = List.of(Corruption.window(CNN, failFrom, failTo));
        SelectionRun scenario = SelectionReplay.scenario(ALL_MODELS, queries, 1, scenarioSeed, corruption);
        List<ErrorCurve> curves = new ArrayList<>(scenario.staticModels());
        for (Policy p : FIG8_POLICIES) {
            curves.add(scenario.run(p.name(), p.create().get(), policySeed, false));
        }
        int[] windows = boundaries(queries, failFrom, failTo);
        String title = String.format(Locale.ROOT,
                "Figure 8 (Clipper NSDI'17): %,d queries, %s random labels for [%,d, %,d), then recovered", queries,
                CNN, failFrom, failTo);
        System.out.println();
        System.out.print(ErrorCurve.table(title + String.format(Locale.ROOT,
                "; scenario seed %d, policy seed %d; error rate (cumulative, per window)", scenarioSeed, policySeed),
                curves, windows));

        // robustness: the same scenario shape over several seed pairs
        Map<String, double[]> finals = new LinkedHashMap<>();
        Map<String, double[]> recovery = new LinkedHashMap<>();
        for (int s = 1; s <= seeds; s++) {
            SelectionRun sc = SelectionReplay.scenario(ALL_MODELS, queries, 1, s, corruption);
            List<ErrorCurve> cs = new ArrayList<>(sc.staticModels());
            for (Policy p : FIG8_POLICIES) {
                cs.add(sc.run(p.name(), p.create().get(), s, false));
            }
            for (ErrorCurve c : cs) {
                finals.computeIfAbsent(c.name(), k -> new double[seeds])[s - 1] = c.last();
                recovery.computeIfAbsent(c.name(), k -> new double[seeds])[s - 1] = c.window(failTo, queries);
            }
        }
        System.out.printf(Locale.ROOT, "  over %d seed pairs (s, s), s = 1..%d: final cumulative error mean [min, max];"
                + " error over the recovery [%,d, %,d) mean%n", seeds, seeds, failTo, queries);
        Map<String, Object> overSeeds = new LinkedHashMap<>();
        for (Map.Entry<String, double[]> e : finals.entrySet()) {
            double[] f = e.getValue();
            double mean = mean(f);
            double min = java.util.Arrays.stream(f).min().orElseThrow();
            double max = java.util.Arrays.stream(f).max().orElseThrow();
            double rec = mean(recovery.get(e.getKey()));
            System.out.printf(Locale.ROOT, "  %-22s %.4f [%.4f, %.4f]   recovery %.4f%n", e.getKey(), mean, min, max, rec);
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("final_mean", mean);
            row.put("final_min", min);
            row.put("final_max", max);
            row.put("recovery_window_mean", rec);
            overSeeds.put(e.getKey(), row);
        }
        for (Policy p : FIG8_POLICIES) {
            double[] pf = finals.get(p.name());
            int wins = 0;
            for (int s = 0; s < seeds; s++) {
                double bestStatic = Double.MAX_VALUE;
                for (String m : ALL_MODELS) {
                    bestStatic = Math.min(bestStatic, finals.get(m)[s]);
                }
                wins += pf[s] < bestStatic ? 1 : 0;
            }
            System.out.printf(Locale.ROOT, "  %-22s beat every static model in %d/%d seed pairs%n", p.name(), wins, seeds);
            @SuppressWarnings("unchecked")
            Map<String, Object> row = (Map<String, Object>) overSeeds.get(p.name());
            row.put("beat_every_static_model", wins + "/" + seeds);
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        System.out.printf(Locale.ROOT, "  (%.1f s)%n", elapsed);

        writeCsv(out.resolve("fig8.csv"), curves);
        chart(out.resolve("fig8.png"), String.format(Locale.ROOT,
                "Fig. 8 replay: %s answers random labels for queries %,d-%,d (between the vertical lines), then recovers",
                CNN, failFrom, failTo), curves,
                List.of(new Marker(failFrom, " " + CNN + " fails"), new Marker(failTo, " recovers")));

        Map<String, Object> json = new LinkedHashMap<>();
        json.put("benchmark", "fig8");
        json.put("description", "Clipper NSDI'17 Figure 8: cumulative error of each static model and of the "
                + "selection policies when the best model fails for a window of queries; replay of the real ONNX "
                + "Fashion-MNIST models' outputs through the gateway's policy classes, immediate feedback");
        json.put("queries", queries);
        json.put("models", ALL_MODELS);
        json.put("corrupted_model", CNN);
        json.put("corruption", "uniformly random labels 0..9");
        json.put("corrupted_queries", List.of(failFrom, failTo));
        json.put("scenario_seed", scenarioSeed);
        json.put("policy_seed", policySeed);
        Map<String, Object> policies = new LinkedHashMap<>();
        policies.put("exp3 (default)", "exp3, eta 0.1, gamma 0.05");
        policies.put("exp3 (eta=0.2)", "exp3, selection_params {\"eta\": 0.2}, gamma 0.05");
        policies.put("exp4 (default)", "exp4, eta 0.1");
        json.put("policies", policies);
        json.put("series", summary(curves, windows));
        Map<String, Object> seedPairs = new LinkedHashMap<>();
        seedPairs.put("seeds", seeds);
        seedPairs.put("series", overSeeds);
        json.put("over_seed_pairs", seedPairs);
        json.put("elapsed_s", elapsed);
        BenchOutput.write(out.resolve("fig8.json"), BenchOutput.json(json));
        System.out.println("  wrote " + out.resolve("fig8.csv") + ", fig8.png, fig8.json");
    }

    private static void fig10(Path out, int queries, int users, int seeds) throws Exception {
        long start = System.nanoTime();
        List<Corruption> corruptions = List.of(
                Corruption.forUsers(CNN, u -> u < users / 2),
                Corruption.forUsers(MLP, u -> u >= users / 2));
        int[] windows = boundaries(queries);
        List<ErrorCurve> first = null;
        Map<String, double[]> finals = new LinkedHashMap<>();
        for (int s = 1; s <= seeds; s++) {
            SelectionRun scenario = SelectionReplay.scenario(ALL_MODELS, queries, users, s, corruptions);
            List<ErrorCurve> curves = new ArrayList<>(scenario.staticModels());
            curves.add(scenario.run("exp3 per-user", new Exp3Policy(), s, true));
            curves.add(scenario.run("exp3 app-wide", new Exp3Policy(), s, false));
            curves.add(scenario.run("exp4 per-user", new Exp4Policy(), s, true));
            curves.add(scenario.run("exp4 app-wide", new Exp4Policy(), s, false));
            if (first == null) {
                first = curves;
            }
            for (ErrorCurve c : curves) {
                finals.computeIfAbsent(c.name(), k -> new double[seeds])[s - 1] = c.last();
            }
        }
        String title = String.format(Locale.ROOT, "Figure 10 analogue (personalization): %,d queries, %d users;"
                + " %s random for users 0..%d, %s random for users %d..%d", queries, users, CNN, users / 2 - 1, MLP,
                users / 2, users - 1);
        System.out.println();
        System.out.print(ErrorCurve.table(title + "; seed 1; error rate (cumulative, per window)", first, windows));
        System.out.printf(Locale.ROOT, "  mean final cumulative error over %d seeds:%n", seeds);
        Map<String, Object> means = new LinkedHashMap<>();
        for (Map.Entry<String, double[]> e : finals.entrySet()) {
            System.out.printf(Locale.ROOT, "  %-22s %.4f%n", e.getKey(), mean(e.getValue()));
            means.put(e.getKey(), mean(e.getValue()));
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        System.out.printf(Locale.ROOT, "  (%.1f s)%n", elapsed);

        writeCsv(out.resolve("fig10.csv"), first);
        chart(out.resolve("fig10.png"), String.format(Locale.ROOT,
                "Fig. 10 analogue: %d users, %s random for half of them, %s for the other half: per-user vs app-wide",
                users, CNN, MLP), first, List.of());

        Map<String, Object> json = new LinkedHashMap<>();
        json.put("benchmark", "fig10");
        json.put("description", "Clipper NSDI'17 Figure 10 analogue: per-user (per-context) selection states vs one "
                + "app-wide state when which model is good depends on the user; replay of the real ONNX "
                + "Fashion-MNIST models' outputs through the gateway's policy classes, immediate feedback");
        json.put("queries", queries);
        json.put("users", users);
        json.put("models", ALL_MODELS);
        json.put("corruption", CNN + " random labels for users 0.." + (users / 2 - 1) + ", " + MLP
                + " random labels for users " + users / 2 + ".." + (users - 1) + ", for the whole run");
        json.put("policies", "exp3 (eta 0.1, gamma 0.05) and exp4 (eta 0.1), defaults");
        json.put("seed", 1);
        json.put("series", summary(first, windows));
        Map<String, Object> meanOverSeeds = new LinkedHashMap<>();
        meanOverSeeds.put("seeds", seeds);
        meanOverSeeds.put("series", means);
        json.put("mean_final_over_seeds", meanOverSeeds);
        json.put("elapsed_s", elapsed);
        BenchOutput.write(out.resolve("fig10.json"), BenchOutput.json(json));
        System.out.println("  wrote " + out.resolve("fig10.csv") + ", fig10.png, fig10.json");
    }

    // ------------------------------------------------------------------------------------------

    /** 0, the given inner boundaries, every quarter of the run, and {@code queries}, sorted and distinct. */
    private static int[] boundaries(int queries, int... inner) {
        java.util.TreeSet<Integer> b = new java.util.TreeSet<>();
        b.add(0);
        b.add(queries);
        for (int i = 1; i < 4; i++) {
            b.add(queries * i / 4);
        }
        for (int i : inner) {
            if (i > 0 && i < queries) {
                b.add(i);
            }
        }
        return b.stream().mapToInt(Integer::intValue).toArray();
    }

    private static Map<String, Object> summary(List<ErrorCurve> curves, int[] windows) {
        Map<String, Object> series = new LinkedHashMap<>();
        for (ErrorCurve c : curves) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("final_cumulative_error", c.last());
            row.put("errors", Math.round(c.last() * c.queries()));
            Map<String, Object> w = new LinkedHashMap<>();
            for (int i = 0; i + 1 < windows.length; i++) {
                w.put("[" + windows[i] + "," + windows[i + 1] + ")", c.window(windows[i], windows[i + 1]));
            }
            row.put("window_error", w);
            series.put(c.name(), row);
        }
        return series;
    }

    private static void writeCsv(Path file, List<ErrorCurve> curves) throws Exception {
        int n = curves.get(0).queries();
        StringBuilder sb = new StringBuilder(n * 16 * (curves.size() + 1));
        sb.append("query");
        for (ErrorCurve c : curves) {
            sb.append(',').append(c.name().contains(",") ? '"' + c.name() + '"' : c.name());
        }
        sb.append('\n');
        for (int q = 0; q < n; q++) {
            sb.append(q + 1);
            for (ErrorCurve c : curves) {
                sb.append(',').append(String.format(Locale.ROOT, "%.6f", c.at(q)));
            }
            sb.append('\n');
        }
        BenchOutput.write(file, sb.toString());
    }

    /** Cumulative error vs queries, from query 100 on (the first few dozen are pure noise), every 10th. */
    private static void chart(Path png, String title, List<ErrorCurve> curves, List<Marker> markers) throws Exception {
        int n = curves.get(0).queries();
        int from = Math.min(99, n - 1);
        int step = Math.max(1, n / 2000);
        int points = (n - 1 - from) / step + 1;
        double[] x = new double[points];
        Map<String, double[]> series = new LinkedHashMap<>();
        double max = 0;
        for (ErrorCurve c : curves) {
            double[] y = new double[points];
            for (int i = 0; i < points; i++) {
                int q = from + i * step;
                x[i] = q + 1;
                y[i] = c.at(q);
                max = Math.max(max, y[i]);
            }
            series.put(c.name(), y);
        }
        double yMax = Math.min(1.0, Math.ceil(max / 0.05) * 0.05 + 0.05);
        BenchOutput.lineChart(png, title, "queries", "cumulative error rate", x, series, yMax, markers);
    }

    private static double mean(double[] v) {
        double s = 0;
        for (double d : v) {
            s += d;
        }
        return s / v.length;
    }
}
