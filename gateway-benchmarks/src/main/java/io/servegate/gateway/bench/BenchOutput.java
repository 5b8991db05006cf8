package io.servegate.gateway.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.knowm.xchart.AnnotationLine;
import org.knowm.xchart.AnnotationText;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.XYStyler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * What the benchmarks write: small JSON documents (from maps, lists, strings, numbers, booleans),
 * and line charts as PNG (XChart). Benchmarks report, they never assert.
 */
public final class BenchOutput {

    private BenchOutput() {
    }

    /** A vertical marker line at {@code x} with a label near the top of the plot. */
    public record Marker(double x, String label) {
    }

    /**
     * Writes a line chart of {@code series} (name → y values over {@code x}) to {@code png}.
     *
     * @param yMax the y axis' upper bound, or {@code null} for automatic
     */
    public static void lineChart(Path png, String title, String xTitle, String yTitle, double[] x,
            Map<String, double[]> series, Double yMax, List<Marker> markers) throws IOException {
        XYChart chart = new XYChartBuilder().width(1200).height(720).title(title)
                .xAxisTitle(xTitle).yAxisTitle(yTitle).build();
        XYStyler st = chart.getStyler();
        st.setLegendPosition(Styler.LegendPosition.OutsideS);
        st.setLegendLayout(Styler.LegendLayout.Horizontal);
        st.setChartBackgroundColor(Color.WHITE);
        st.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        st.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        st.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        st.setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        st.setPlotBackgroundColor(Color.WHITE);
        st.setPlotGridLinesColor(new Color(225, 225, 225));
        st.setYAxisMin(0.0);
        st.setXAxisMin(0.0);
        st.setXAxisMax(x[x.length - 1]);
        st.setXAxisDecimalPattern("#,##0");
        st.setYAxisDecimalPattern("0.00");
        if (yMax != null) {
            st.setYAxisMax(yMax);
        }
        Color[] palette = {
            new Color(31, 119, 180), new Color(255, 127, 14), new Color(44, 160, 44), new Color(140, 86, 75),
            new Color(214, 39, 40), new Color(148, 103, 189), new Color(20, 20, 20), new Color(227, 119, 194),
            new Color(127, 127, 127), new Color(188, 189, 34)};
        int i = 0;
        for (Map.Entry<String, double[]> e : series.entrySet()) {
            XYSeries s = chart.addSeries(e.getKey(), x, e.getValue());
            s.setMarker(SeriesMarkers.NONE);
            s.setLineColor(palette[i % palette.length]);
            // policies (after the static models) drawn thicker and solid, static models dashed
            boolean policy = e.getKey().startsWith("exp");
            s.setLineStyle(policy ? new BasicStroke(2.6f)
                    : new BasicStroke(1.6f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {7f, 4f}, 0f));
            i++;
        }
        double top = yMax != null ? yMax : series.values().stream().flatMapToDouble(java.util.Arrays::stream)
                .max().orElse(1);
        for (Marker m : markers) {
            AnnotationLine line = new AnnotationLine(m.x(), true, false);
            chart.addAnnotation(line);
            chart.addAnnotation(new AnnotationText(m.label(), m.x(), top * 0.97, false));
        }
        Files.createDirectories(png.toAbsolutePath().getParent());
        BitmapEncoder.saveBitmap(chart, png.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    /** Writes {@code text} to {@code file}, creating its directory. */
    public static void write(Path file, String text) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }

    /** Pretty JSON of maps (insertion order kept when ordered), lists, strings, numbers, booleans and null. */
    public static String json(Object value) {
        StringBuilder sb = new StringBuilder();
        json(sb, value, 0);
        return sb.append('\n').toString();
    }

    private static void json(StringBuilder sb, Object v, int indent) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof String s) {
            quote(sb, s);
        } else if (v instanceof Double d) {
            sb.append(Double.isFinite(d) ? new java.math.BigDecimal(d).round(new java.math.MathContext(6))
                    .stripTrailingZeros().toPlainString() : "null");
        } else if (v instanceof Float f) {
            json(sb, (double) f, indent);
        } else if (v instanceof Number || v instanceof Boolean) {
            sb.append(v);
        } else if (v instanceof Map<?, ?> m) {
            if (m.isEmpty()) {
                sb.append("{}");
                return;
            }
            sb.append("{\n");
            Iterator<? extends Map.Entry<?, ?>> it = m.entrySet().iterator();
            while (it.hasNext()) {
                Map.Entry<?, ?> e = it.next();
                pad(sb, indent + 1);
                quote(sb, String.valueOf(e.getKey()));
                sb.append(": ");
                json(sb, e.getValue(), indent + 1);
                sb.append(it.hasNext() ? ",\n" : "\n");
            }
            pad(sb, indent);
            sb.append('}');
        } else if (v instanceof Iterable<?> l) {
            Iterator<?> it = l.iterator();
            if (!it.hasNext()) {
                sb.append("[]");
                return;
            }
            sb.append("[\n");
            while (it.hasNext()) {
                pad(sb, indent + 1);
                json(sb, it.next(), indent + 1);
                sb.append(it.hasNext() ? ",\n" : "\n");
            }
            pad(sb, indent);
            sb.append(']');
        } else if (v instanceof double[] a) {
            sb.append('[');
            for (int i = 0; i < a.length; i++) {
                json(sb, a[i], indent);
                sb.append(i + 1 < a.length ? ", " : "");
            }
            sb.append(']');
        } else {
            quote(sb, v.toString());
        }
    }

    private static void pad(StringBuilder sb, int indent) {
        sb.append("  ".repeat(indent));
    }

    private static void quote(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }

    /** {@code --name value} options, with defaults. */
    public static final class Args {
        private final Map<String, String> values = new java.util.HashMap<>();

        public Args(String[] args, String... allowed) {
            List<String> names = List.of(allowed);
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                String name;
                String value;
                int eq = a.indexOf('=');
                if (a.startsWith("--") && eq > 0) {
                    name = a.substring(2, eq);
                    value = a.substring(eq + 1);
                } else if (a.startsWith("--") && i + 1 < args.length) {
                    name = a.substring(2);
                    value = args[++i];
                } else {
                    throw new IllegalArgumentException("expected --name value, got '" + a + "'; options: " + names);
                }
                if (!names.contains(name)) {
                    throw new IllegalArgumentException("unknown option --" + name + "; options: " + names);
                }
                values.put(name, value);
            }
        }

        public String string(String name, String def) {
            return values.getOrDefault(name, def);
        }

        public int integer(String name, int def) {
            return values.containsKey(name) ? Integer.parseInt(values.get(name).replace("_", "")) : def;
        }

        public long number(String name, long def) {
            return values.containsKey(name) ? Long.parseLong(values.get(name).replace("_", "")) : def;
        }
    }
}
