package io.servegate.gateway.api;

import io.servegate.oip.client.TensorType;

/**
 * The checks every API applies to one input that arrived already decoded (from a binary tensor,
 * a raw body or another gateway's forward) rather than through {@link InputParser}'s JSON: its
 * length against the limit and the model's declared length, and finite numbers.
 */
public final class RowChecks {

    private RowChecks() {
    }

    /**
     * What is wrong with {@code row}, named by {@code where} (e.g. {@code row 3}); null when nothing.
     *
     * @param expectedLength the values (numbers, or bytes of a {@code bytes} input) the model's
     *                       containers declare one input has; -1 when unknown
     * @param maxInputLength the most elements (numbers, bytes, characters) one input may have
     */
    public static String problem(Object row, String where, TensorType<?> type, int expectedLength, int maxInputLength) {
        int length = row instanceof String v ? v.length()
                : row instanceof byte[] v ? v.length
                : java.lang.reflect.Array.getLength(row);
        if (length > maxInputLength) {
            return where + " has " + length + " elements; the limit is " + maxInputLength;
        }
        if (type.numeric() && length == 0) {
            return where + " is empty";
        }
        if (expectedLength > 0 && length != expectedLength && !(row instanceof String)) {
            return lengthProblem(where, row instanceof byte[] ? "bytes" : "elements", length, expectedLength);
        }
        if (row instanceof float[] v) {
            for (int i = 0; i < v.length; i++) {
                if (!Float.isFinite(v[i])) {
                    return where + " element " + i + " is not a finite number";
                }
            }
        } else if (row instanceof double[] v) {
            for (int i = 0; i < v.length; i++) {
                if (!Double.isFinite(v[i])) {
                    return where + " element " + i + " is not a finite number";
                }
            }
        }
        return null;
    }

    /** An input of the wrong length, named with both lengths (the one the model's containers declare, the one received). */
    static String lengthProblem(String where, String unit, int received, int expected) {
        return where + " has " + received + " " + unit + "; the model expects " + expected + ", as its containers "
                + "declare";
    }
}
