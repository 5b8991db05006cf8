package io.servegate.workload.arrival;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A load trace: how many queries arrive in each consecutive interval of {@code binNanos} (a
 * second or a minute). Played as a Poisson process whose rate is constant within each interval.
 *
 * <p>Two file layouts are read:
 * <ul>
 *   <li><b>Counts per interval</b>: one interval per line, its count (or rate) in the line's
 *       last CSV field ({@code 120}, {@code 17,120} or {@code 2026-01-01T00:00:17Z,120}). Blank
 *       lines, {@code #} comments and a header line are skipped. The interval is given by the
 *       caller (1 s by default: a per-second rate file).</li>
 *   <li><b>The Azure Functions trace</b> ({@code invocations_per_function_md.anon.d*.csv}): a
 *       header {@code HashOwner,HashApp,HashFunction,Trigger,1,2,…,1440}, then one row per
 *       function with its invocations in each minute. The rows are summed (or one function is
 *       taken), and the interval is a minute.</li>
 * </ul>
 *
 * @param source where the trace came from, for reports
 * @param counts queries per interval
 * @param binNanos the interval's length
 */
public record RateTrace(String source, double[] counts, long binNanos) {

    private static final long SECOND = 1_000_000_000L;

    public RateTrace {
        if (counts.length == 0 || binNanos <= 0) {
            throw new IllegalArgumentException("a trace needs at least one interval of positive length");
        }
        boolean positive = false;
        for (double c : counts) {
            if (!(c >= 0) || Double.isInfinite(c)) {
                throw new IllegalArgumentException("trace counts must be finite and >= 0, got " + c);
            }
            positive |= c > 0;
        }
        if (!positive) {
            throw new IllegalArgumentException("a trace needs a positive count somewhere");
        }
        counts = counts.clone();
    }

    /** A trace of per-second rates (requests/s), e.g. a stepped load. */
    public static RateTrace perSecond(String source, double[] ratesPerSecond) {
        return new RateTrace(source, ratesPerSecond, SECOND);
    }

    /**
     * Reads a trace file in either layout.
     *
     * @param binSeconds the interval of a counts-per-interval file (ignored for the Azure layout)
     * @param function   for the Azure layout, the {@code HashFunction} to take, or null for all rows summed
     */
    public static RateTrace read(Path file, double binSeconds, String function) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        for (String line : lines) {
            String l = line.strip();
            if (!l.isEmpty() && !l.startsWith("#")) {
                return l.startsWith("HashOwner,") ? readAzure(file, lines, function)
                        : readCounts(file, lines, Math.round(binSeconds * SECOND));
            }
        }
        throw new IOException(file + ": empty trace");
    }

    private static RateTrace readCounts(Path file, List<String> lines, long binNanos) throws IOException {
        List<Double> counts = new ArrayList<>();
        boolean first = true;
        int lineNo = 0;
        for (String raw : lines) {
            lineNo++;
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            try {
                counts.add(Double.parseDouble(line.substring(line.lastIndexOf(',') + 1).strip()));
            } catch (NumberFormatException e) {
                if (!first) {
                    throw new IOException(file + ":" + lineNo + ": not a count: " + raw, e);
                }
            }
            first = false;
        }
        return make(file, counts.stream().mapToDouble(Double::doubleValue).toArray(), binNanos);
    }

    private static RateTrace readAzure(Path file, List<String> lines, String function) throws IOException {
        double[] sums = null;
        int lineNo = 0;
        int rows = 0;
        for (String raw : lines) {
            lineNo++;
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#") || line.startsWith("HashOwner,")) {
                continue;
            }
            String[] f = line.split(",");
            if (f.length < 5) {
                throw new IOException(file + ":" + lineNo + ": expected owner,app,function,trigger,minutes...");
            }
            if (function != null && !function.equals(f[2])) {
                continue;
            }
            if (sums == null) {
                sums = new double[f.length - 4];
            } else if (sums.length != f.length - 4) {
                throw new IOException(file + ":" + lineNo + ": " + (f.length - 4) + " minutes, expected " + sums.length);
            }
            for (int m = 0; m < sums.length; m++) {
                try {
                    sums[m] += Double.parseDouble(f[m + 4]);
                } catch (NumberFormatException e) {
                    throw new IOException(file + ":" + lineNo + ": minute " + (m + 1) + " is not a count", e);
                }
            }
            rows++;
        }
        if (rows == 0) {
            throw new IOException(file + ": no function rows" + (function == null ? "" : " for " + function));
        }
        return make(file, sums, 60 * SECOND);
    }

    private static RateTrace make(Path file, double[] counts, long binNanos) throws IOException {
        try {
            return new RateTrace(file.toString(), counts, binNanos);
        } catch (IllegalArgumentException e) {
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }

    /** The mean rate over the trace, queries per second. */
    public double meanRate() {
        return Arrays.stream(counts).sum() / (counts.length * (binNanos / 1e9));
    }

    /** The trace's length. */
    public long durationNanos() {
        return counts.length * binNanos;
    }

    /** The same shape, every count multiplied so that the mean rate is {@code rate}. */
    public RateTrace scaledToMean(double rate) {
        double f = rate / meanRate();
        return new RateTrace(source, Arrays.stream(counts).map(c -> c * f).toArray(), binNanos);
    }

    /** The trace as arrivals: Poisson within each interval, repeating when a run outlasts it. */
    public ArrivalProcess arrivals() {
        double[] rates = Arrays.stream(counts).map(c -> c / (binNanos / 1e9)).toArray();
        long[] widths = new long[counts.length];
        Arrays.fill(widths, binNanos);
        return new PiecewisePoisson(rates, widths);
    }
}
