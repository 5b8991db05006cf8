package io.servegate.gateway.api;

import java.nio.charset.StandardCharsets;

/**
 * Converts a JSON number's text to a double, exactly as {@link Double#parseDouble} does. Short
 * decimals (model inputs such as {@code 0.003921569}: at most 15 significant digits and a power
 * of ten up to 22) take Clinger's fast path: the digits and the power of ten are both exact
 * doubles, so one IEEE multiplication or division rounds the true value correctly. Anything else
 * goes to the JDK. A feedback body carries 784 such numbers, and their conversion was about a
 * sixth of the gateway's CPU on the feedback path.
 */
final class DecimalText {

    private static final double[] POWERS_OF_TEN = {
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    /** Integers up to 10^15 - 1 are exact doubles; 10^15 < 2^53. */
    private static final int MAX_FAST_DIGITS = 15;

    private DecimalText() {
    }

    /** The double of the number written in {@code text[offset, offset + length)} (ASCII), which is a valid JSON number. */
    static double toDouble(byte[] text, int offset, int length) {
        int i = offset;
        int end = offset + length;
        boolean negative = text[i] == '-';
        if (negative) {
            i++;
        }
        long digits = 0;
        int significant = 0;
        int exponent = 0;
        boolean fraction = false;
        for (; i < end; i++) {
            byte c = text[i];
            if (c == '.') {
                fraction = true;
            } else if (c >= '0' && c <= '9') {
                if (digits != 0 || c != '0') {
                    if (++significant > MAX_FAST_DIGITS) {
                        return slow(text, offset, length);
                    }
                    digits = 10 * digits + (c - '0');
                }
                if (fraction) {
                    exponent--;
                }
            } else {
                break;
            }
        }
        if (i < end) {
            // e or E, then an optional sign and at least one digit (the parser has checked the syntax)
            i++;
            boolean negativeExponent = text[i] == '-';
            if (text[i] == '-' || text[i] == '+') {
                i++;
            }
            int written = 0;
            for (; i < end; i++) {
                written = 10 * written + (text[i] - '0');
                if (written > 1000) {
                    return slow(text, offset, length);
                }
            }
            exponent += negativeExponent ? -written : written;
        }
        double value;
        if (digits == 0) {
            value = 0;
        } else if (exponent >= 0 && exponent < POWERS_OF_TEN.length) {
            value = digits * POWERS_OF_TEN[exponent];
        } else if (exponent < 0 && -exponent < POWERS_OF_TEN.length) {
            value = digits / POWERS_OF_TEN[-exponent];
        } else {
            return slow(text, offset, length);
        }
        return negative ? -value : value;
    }

    private static double slow(byte[] text, int offset, int length) {
        return Double.parseDouble(new String(text, offset, length, StandardCharsets.US_ASCII));
    }
}
