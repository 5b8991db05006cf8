package io.servegate.sim;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

/** The simulator's PNG plots, drawn with XChart (headless), sized and styled as the load generator's. */
final class Charts {

    private static final int WIDTH = 800;
    private static final int HEIGHT = 480;

    static {
        System.setProperty("java.awt.headless", "true");
    }

    private Charts() {
    }

    /** One named series of (x, y) points. */
    record Series(String name, List<Double> x, List<Double> y) {
    }

    /** Lines with markers, one per series. */
    static Path lines(Path file, String title, String xTitle, String yTitle, List<Series> series) throws IOException {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(xTitle)
                .yAxisTitle(yTitle).build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        for (Series s : series) {
            chart.addSeries(s.name(), s.x(), s.y());
        }
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        return file;
    }

    /** An autoscaled run over time: offered and good rates on the left axis, replicas on the right. */
    static Path scaling(Path file, String title, List<ScalingTrace.Sample> samples) throws IOException {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle("time (s)").build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setMarkerSize(0);
        chart.setYAxisGroupTitle(0, "queries/s");
        chart.setYAxisGroupTitle(1, "replicas");
        chart.getStyler().setYAxisGroupPosition(1, Styler.YAxisPosition.Right);
        List<Double> t = samples.stream().map(ScalingTrace.Sample::atS).toList();
        chart.addSeries("offered", t, samples.stream().map(ScalingTrace.Sample::offeredRps).toList());
        chart.addSeries("goodput", t, samples.stream().map(ScalingTrace.Sample::goodRps).toList());
        chart.addSeries("replicas", t, samples.stream().map(s -> (double) s.replicas()).toList()).setYAxisGroup(1);
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        return file;
    }

    /** One bar per category. */
    static Path bars(Path file, String title, String yTitle, List<String> categories, List<Double> values)
            throws IOException {
        CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(title).yAxisTitle(yTitle)
                .build();
        chart.getStyler().setLegendVisible(false);
        chart.getStyler().setChartBackgroundColor(Color.WHITE);
        chart.getStyler().setXAxisLabelRotation(20);
        chart.addSeries("values", categories, values);
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        return file;
    }

    /** Bars: the share of queries sent in batches of each size. */
    static Path batchSizes(Path file, String title, long[] batchesBySize) throws IOException {
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
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        return file;
    }
}
