package io.servegate.sim.selection;

import java.util.List;
import java.util.Locale;

/** A cumulative error-rate curve over a run's queries: {@link #at(int)} is the error rate over queries {@code 0..q}. */
public final class ErrorCurve {

    private final String name;
    private final int[] cumulativeErrors;

    /**
     * @param name   what the curve is of, e.g. a policy's name
     * @param errors whether each query, in order, was an error
     */
    public ErrorCurve(String name, boolean[] errors) {
        this.name = name;
        this.cumulativeErrors = new int[errors.length];
        int sum = 0;
        for (int q = 0; q < errors.length; q++) {
            sum += errors[q] ? 1 : 0;
            cumulativeErrors[q] = sum;
        }
    }

    /** What the curve is of. */
    public String name() {
        return name;
    }

    /** How many queries it covers. */
    public int queries() {
        return cumulativeErrors.length;
    }

    /** How many queries were errors. */
    public int errors() {
        return cumulativeErrors.length == 0 ? 0 : cumulativeErrors[cumulativeErrors.length - 1];
    }

    /** The cumulative error rate after query {@code q} (over queries {@code 0..q}). */
    public double at(int q) {
        return cumulativeErrors[q] / (double) (q + 1);
    }

    /** The cumulative error rate after the last query. */
    public double last() {
        return at(cumulativeErrors.length - 1);
    }

    /** The error rate over the queries {@code [from, to)} alone. */
    public double window(int from, int to) {
        int before = from == 0 ? 0 : cumulativeErrors[from - 1];
        return (cumulativeErrors[to - 1] - before) / (double) (to - from);
    }

    /**
     * A compact text table: each curve's final cumulative error and its error rate over each
     * window {@code [boundaries[i], boundaries[i + 1])}.
     */
    public static String table(String title, List<ErrorCurve> curves, int... boundaries) {
        StringBuilder sb = new StringBuilder(title).append('\n');
        sb.append(String.format(Locale.ROOT, "  %-22s %9s", "", "cumul."));
        for (int i = 0; i + 1 < boundaries.length; i++) {
            sb.append(String.format(Locale.ROOT, " %13s", "[" + boundaries[i] + "," + boundaries[i + 1] + ")"));
        }
        sb.append('\n');
        for (ErrorCurve c : curves) {
            sb.append(String.format(Locale.ROOT, "  %-22s %9.4f", c.name(), c.last()));
            for (int i = 0; i + 1 < boundaries.length; i++) {
                sb.append(String.format(Locale.ROOT, " %13.4f", c.window(boundaries[i], boundaries[i + 1])));
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%s: %.4f", name, last());
    }
}
