package io.servegate.core.selection;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/** Output comparison, losses and model-list checks shared by the built-in policies. */
final class Outputs {

    /**
     * Plain decimal numbers only: {@link Double#parseDouble} alone would also accept
     * {@code "NaN"}, {@code "0x1p3"} or {@code "3f"}, which are labels, not numbers.
     */
    private static final Pattern DECIMAL =
            Pattern.compile("[+-]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d+)?");

    private Outputs() {
    }

    /**
     * The finite value of a trimmed plain decimal number, or {@code null} if {@code s} is not one.
     */
    static Double number(String s) {
        if (s == null) {
            return null;
        }
        String t = s.trim();
        if (t.isEmpty() || t.length() > 400 || !DECIMAL.matcher(t).matches()) {
            return null;
        }
        double v = Double.parseDouble(t);
        if (!Double.isFinite(v)) {
            return null;
        }
        // 0.0 and -0.0 are the same label.
        return v == 0.0 ? 0.0 : v;
    }

    /**
     * The identity of a classification label: its number if it is one (so {@code "3"} and
     * {@code "3.0"} match), else the trimmed string. The two key types never equal each other.
     */
    static Object labelKey(String s) {
        Double n = number(s);
        return n != null ? n : s.trim();
    }

    /** The loss of {@code output} against {@code label}, in {@code [0, 1]}. */
    static double loss(Task task, String output, String label, double scale) {
        if (task == Task.CLASSIFICATION) {
            return output != null && labelKey(output).equals(labelKey(label)) ? 0.0 : 1.0;
        }
        double y = requireNumericLabel(label);
        Double out = number(output);
        return out == null ? 1.0 : Math.min(1.0, Math.abs(out - y) / scale);
    }

    static double requireNumericLabel(String label) {
        Double y = number(label);
        if (y == null) {
            throw new IllegalArgumentException("label '" + label
                    + "' is not a decimal number, as a regression policy's feedback must be");
        }
        return y;
    }

    static String requireLabel(String label) {
        if (label == null) {
            throw new IllegalArgumentException("label must not be null");
        }
        return label;
    }

    /** Checks a linked-model list and returns an unmodifiable copy. */
    static List<String> checkModels(List<String> models) {
        if (models == null) {
            throw new IllegalArgumentException("models must not be null");
        }
        Set<String> seen = new HashSet<>();
        for (String m : models) {
            if (m == null || m.isBlank()) {
                throw new IllegalArgumentException("model names must not be null or blank, got " + models);
            }
            if (!seen.add(m)) {
                throw new IllegalArgumentException("duplicate model '" + m + "' in " + models);
            }
        }
        return List.copyOf(models);
    }

    static void checkPositiveFinite(String what, double value) {
        if (!(value > 0.0 && Double.isFinite(value))) {
            throw new IllegalArgumentException(what + " must be finite and > 0, got " + value);
        }
    }
}
