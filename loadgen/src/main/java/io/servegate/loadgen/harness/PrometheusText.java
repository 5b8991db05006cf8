package io.servegate.loadgen.harness;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The samples of a Prometheus text exposition with their labels, for the series a scenario reads
 * per app, model or replica (where {@link GatewayMetrics} sums over all of them).
 */
public final class PrometheusText {

    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{([^}]*)})?\\s+(\\S+)");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    /** One sample: metric name, labels, value. */
    public record Sample(String name, Map<String, String> labels, double value) {
    }

    private final List<Sample> samples;

    private PrometheusText(List<Sample> samples) {
        this.samples = samples;
    }

    /** Parses an exposition; null text (a failed scrape) gives no samples. */
    public static PrometheusText parse(String text) {
        List<Sample> out = new ArrayList<>();
        for (String line : text == null ? new String[0] : text.split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            Matcher m = SAMPLE.matcher(line);
            if (!m.find()) {
                continue;
            }
            double value;
            try {
                value = Double.parseDouble(m.group(3));
            } catch (NumberFormatException e) {
                continue;
            }
            Map<String, String> labels = new LinkedHashMap<>();
            Matcher l = LABEL.matcher(m.group(2) == null ? "" : m.group(2));
            while (l.find()) {
                labels.put(l.group(1), l.group(2));
            }
            out.add(new Sample(m.group(1), labels, value));
        }
        return new PrometheusText(out);
    }

    /** Every sample, in the exposition's order. */
    public List<Sample> samples() {
        return samples;
    }

    /** The samples of {@code name} whose label {@code label} is {@code value}. */
    public List<Sample> where(String name, String label, String value) {
        return samples.stream().filter(s -> s.name().equals(name) && value.equals(s.labels().get(label))).toList();
    }

    /** The sum of {@link #where}'s values; 0 without any. */
    public double sum(String name, String label, String value) {
        return where(name, label, value).stream().mapToDouble(Sample::value).sum();
    }

    /** {@link #where}'s values summed per the value of label {@code by}. */
    public Map<String, Double> sumBy(String name, String label, String value, String by) {
        Map<String, Double> out = new TreeMap<>();
        for (Sample s : where(name, label, value)) {
            out.merge(String.valueOf(s.labels().get(by)), s.value(), Double::sum);
        }
        return out;
    }
}
