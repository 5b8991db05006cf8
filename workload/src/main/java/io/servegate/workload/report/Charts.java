package io.servegate.workload.report;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

/** The load generator's and the simulator's PNG plots, drawn with XChart (headless), all of one size and style. */
public final class Charts {

    private static final int WIDTH = 800;
    private static final int HEIGHT = 480;

    static {
        System.setProperty("java.awt.headless", "true");
    }

    private Charts() {
    }

    /** One named series of (x, y) points; y may hold nulls for missing points, which are skipped. */
    public record Series(String name, List<Double> x, List<Double> y) {
    }

    /** Lines with markers, one per series, saved as {@code file} (PNG). */
    public static Path lines(Path file, String title, String xTitle, String yTitle, List<Series> series)
            throws IOException {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(xTitle)
                .yAxisTitle(yTitle).build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        for (Series s : series) {
            List<Double> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            for (int i = 0; i < s.x().size(); i++) {
                if (s.y().get(i) != null) {
                    xs.add(s.x().get(i));
                    ys.add(s.y().get(i));
                }
            }
            if (!xs.isEmpty()) {
                chart.addSeries(s.name(), xs, ys);
            }
        }
        return save(chart, file);
    }

    /**
     * Grouped bars: one group per category, one bar per series ({@code values.get(series)} holds one
     * value per category, null as 0), saved as {@code file} (PNG).
     */
    public static Path bars(Path file, String title, String yTitle, List<String> categories,
            Map<String, List<Double>> values) throws IOException {
        return bars(file, title, yTitle, categories, values, false);
    }

    /** As above; {@code legendBelow} puts the legend under the plot, where it cannot hide tall bars. */
    public static Path bars(Path file, String title, String yTitle, List<String> categories,
            Map<String, List<Double>> values, boolean legendBelow) throws IOException {
        CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(title).yAxisTitle(yTitle)
                .build();
        chart.getStyler().setLegendPosition(legendBelow ? Styler.LegendPosition.OutsideS
                : Styler.LegendPosition.InsideNW);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setXAxisLabelRotation(15);
        for (Map.Entry<String, List<Double>> e : values.entrySet()) {
            chart.addSeries(e.getKey(), categories, e.getValue().stream().map(v -> v == null ? 0.0 : v).toList());
        }
        return save(chart, file);
    }

    /**
     * Lines without markers over time: {@code left} on the left axis, {@code right} on a second
     * axis on the right (e.g. offered and good rates beside the replica count).
     */
    public static Path twoAxes(Path file, String title, String xTitle, String leftTitle, List<Series> left,
            String rightTitle, Series right) throws IOException {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(xTitle).build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setMarkerSize(0);
        chart.setYAxisGroupTitle(0, leftTitle);
        chart.setYAxisGroupTitle(1, rightTitle);
        chart.getStyler().setYAxisGroupPosition(1, Styler.YAxisPosition.Right);
        for (Series s : left) {
            chart.addSeries(s.name(), s.x(), s.y());
        }
        chart.addSeries(right.name(), right.x(), right.y()).setYAxisGroup(1);
        return save(chart, file);
    }

    /** One bar per category, no legend. */
    public static Path bars(Path file, String title, String yTitle, List<String> categories, List<Double> values)
            throws IOException {
        CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(title).yAxisTitle(yTitle)
                .build();
        chart.getStyler().setLegendVisible(false);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setXAxisLabelRotation(20);
        chart.addSeries("values", categories, values);
        return save(chart, file);
    }

    /** Bars: the share of queries sent in batches of each size ({@code batchesBySize[i]} batches of size i). */
    public static Path batchSizes(Path file, String title, long[] batchesBySize) throws IOException {
        List<Integer> sizes = new ArrayList<>();
        List<Double> shares = new ArrayList<>();
        long queries = 0;
        for (int i = 1; i < batchesBySize.length; i++) {
            queries += i * batchesBySize[i];
        }
        int last = 1;
        for (int i = 1; i < batchesBySize.length; i++) {
            if (batchesBySize[i] > 0) {
                last = i;
            }
        }
        for (int i = 1; i <= last; i++) {
            sizes.add(i);
            shares.add(queries == 0 ? 0 : 100.0 * i * batchesBySize[i] / queries);
        }
        CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(title)
                .xAxisTitle("batch size").yAxisTitle("% of queries").build();
        chart.getStyler().setLegendVisible(false);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setXAxisLabelRotation(sizes.size() > 40 ? 90 : 0);
        chart.addSeries("queries", sizes, shares);
        return save(chart, file);
    }

    /** An ordered map for {@link #bars}. */
    public static Map<String, List<Double>> series() {
        return new LinkedHashMap<>();
    }

    private static Path save(org.knowm.xchart.internal.chartpart.Chart<?, ?> chart, Path file) throws IOException {
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        return file;
    }
}
