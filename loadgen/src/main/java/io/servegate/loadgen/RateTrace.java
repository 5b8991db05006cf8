package io.servegate.loadgen;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A load trace: the offered rate (requests/s) of each consecutive second.
 *
 * <p>File format: one second per line. A line is either a bare rate ({@code 120.5}) or CSV whose
 * <em>last</em> field is the rate ({@code 17,120.5} or {@code 2024-01-01T00:00:17Z,120.5}, e.g.
 * a per-second export of a production log). Blank lines and lines starting with {@code #} are
 * skipped, and so is a first line whose last field is not a number (a CSV header). Rates must be
 * {@code ≥ 0}, and at least one must be positive.
 *
 * @param source where the trace came from, for reports
 * @param ratesPerSecond the rate of second 0, 1, 2, ...
 */
public record RateTrace(String source, double[] ratesPerSecond) {

    public RateTrace {
        if (ratesPerSecond.length == 0) {
            throw new IllegalArgumentException("a trace needs at least one second");
        }
        boolean anyPositive = false;
        for (double r : ratesPerSecond) {
            if (!(r >= 0) || Double.isInfinite(r)) {
                throw new IllegalArgumentException("trace rates must be finite and >= 0, got " + r);
            }
            anyPositive |= r > 0;
        }
        if (!anyPositive) {
            throw new IllegalArgumentException("a trace needs a positive rate somewhere");
        }
        ratesPerSecond = ratesPerSecond.clone();
    }

    /** Reads a trace file in the format above. */
    public static RateTrace read(Path file) throws IOException {
        List<Double> rates = new ArrayList<>();
        int lineNo = 0;
        boolean firstContent = true;
        for (String raw : Files.readAllLines(file)) {
            lineNo++;
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String last = line.substring(line.lastIndexOf(',') + 1).strip();
            try {
                rates.add(Double.parseDouble(last));
            } catch (NumberFormatException e) {
                if (!firstContent) {
                    throw new IOException(file + ":" + lineNo + ": not a rate: " + raw);
                }
                // a CSV header
            }
            firstContent = false;
        }
        try {
            return new RateTrace(file.toString(), rates.stream().mapToDouble(Double::doubleValue).toArray());
        } catch (IllegalArgumentException e) {
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }

    /** The mean rate over the trace's seconds. */
    public double meanRate() {
        double sum = 0;
        for (double r : ratesPerSecond) {
            sum += r;
        }
        return sum / ratesPerSecond.length;
    }

    /** The same shape with every rate multiplied so that the mean is {@code mean}. */
    public RateTrace scaledToMean(double mean) {
        double f = mean / meanRate();
        double[] scaled = new double[ratesPerSecond.length];
        for (int i = 0; i < scaled.length; i++) {
            scaled[i] = ratesPerSecond[i] * f;
        }
        return new RateTrace(source, scaled);
    }

    /** The rate of second {@code i}; the trace repeats when a run is longer than it. */
    public double rateAt(long second) {
        return ratesPerSecond[(int) (second % ratesPerSecond.length)];
    }
}
