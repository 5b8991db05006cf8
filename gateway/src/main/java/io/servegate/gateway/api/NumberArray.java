package io.servegate.gateway.api;

import java.util.Arrays;

/**
 * A JSON array of numbers scanned straight from a body's bytes: strict JSON (RFC 8259) numbers,
 * separated by commas, with JSON whitespace around them. Anything else, an empty array included,
 * is not read (null), and is left to the tree path to accept or word an error for.
 *
 * @param values   each number as {@link Double#parseDouble} reads it
 * @param integral whether every number was written as an integer that fits 32 bits (what Jackson
 *                 types {@code INT}, and an {@code ints} input needs)
 * @param end      the index just past the closing bracket
 */
record NumberArray(double[] values, boolean integral, int end) {

    /** Scans the array whose opening bracket is at {@code json[open]}; null if it is not a non-empty array of numbers. */
    static NumberArray scan(byte[] json, int open) {
        double[] values = new double[1024];
        int n = 0;
        boolean integral = true;
        int i = open + 1;
        while (true) {
            i = skipWhitespace(json, i);
            int start = i;
            if (i < json.length && json[i] == '-') {
                i++;
            }
            if (i >= json.length) {
                return null;
            }
            if (json[i] == '0') {
                i++;
            } else if (json[i] >= '1' && json[i] <= '9') {
                i = skipDigits(json, i + 1);
            } else {
                return null;
            }
            boolean integer = true;
            if (i < json.length && json[i] == '.') {
                integer = false;
                int digits = i + 1;
                i = skipDigits(json, digits);
                if (i == digits) {
                    return null;
                }
            }
            if (i < json.length && (json[i] == 'e' || json[i] == 'E')) {
                integer = false;
                i++;
                if (i < json.length && (json[i] == '+' || json[i] == '-')) {
                    i++;
                }
                int digits = i;
                i = skipDigits(json, digits);
                if (i == digits) {
                    return null;
                }
            }
            double value = DecimalText.toDouble(json, start, i - start);
            integral &= integer && value >= Integer.MIN_VALUE && value <= Integer.MAX_VALUE;
            if (n == values.length) {
                values = Arrays.copyOf(values, 2 * n);
            }
            values[n++] = value;
            i = skipWhitespace(json, i);
            if (i >= json.length) {
                return null;
            }
            if (json[i] == ']') {
                return new NumberArray(Arrays.copyOf(values, n), integral, i + 1);
            }
            if (json[i] != ',') {
                return null;
            }
            i++;
        }
    }

    /** The index of the first byte at or after {@code i} that is not JSON whitespace. */
    static int skipWhitespace(byte[] json, int i) {
        while (i < json.length && (json[i] == ' ' || json[i] == '\n' || json[i] == '\r' || json[i] == '\t')) {
            i++;
        }
        return i;
    }

    private static int skipDigits(byte[] json, int i) {
        while (i < json.length && json[i] >= '0' && json[i] <= '9') {
            i++;
        }
        return i;
    }
}
