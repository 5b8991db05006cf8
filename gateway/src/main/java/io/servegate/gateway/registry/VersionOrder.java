package io.servegate.gateway.registry;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Numeric-aware version order: versions are split into runs of digits and non-digits; digit runs
 * compare as numbers ({@code "9" < "10"}), other runs by character code; fewer runs first; ties
 * (e.g. {@code "01"} vs {@code "1"}) by plain character order. The Lua copy in
 * {@link RedisScripts} implements exactly the same order; both only ever see ASCII names.
 */
final class VersionOrder {

    static final Comparator<String> COMPARATOR = VersionOrder::compare;

    private VersionOrder() {
    }

    static int compare(String a, String b) {
        List<String> ca = chunks(a);
        List<String> cb = chunks(b);
        int n = Math.min(ca.size(), cb.size());
        for (int k = 0; k < n; k++) {
            String x = ca.get(k);
            String y = cb.get(k);
            int c;
            if (isDigit(x.charAt(0)) && isDigit(y.charAt(0))) {
                String xs = stripZeros(x);
                String ys = stripZeros(y);
                c = xs.length() != ys.length() ? Integer.compare(xs.length(), ys.length()) : sign(xs.compareTo(ys));
            } else {
                c = sign(x.compareTo(y));
            }
            if (c != 0) {
                return c;
            }
        }
        if (ca.size() != cb.size()) {
            return Integer.compare(ca.size(), cb.size());
        }
        return sign(a.compareTo(b));
    }

    private static List<String> chunks(String s) {
        List<String> out = new ArrayList<>();
        int i = 0;
        while (i < s.length()) {
            boolean digit = isDigit(s.charAt(i));
            int j = i + 1;
            while (j < s.length() && isDigit(s.charAt(j)) == digit) {
                j++;
            }
            out.add(s.substring(i, j));
            i = j;
        }
        return out;
    }

    private static String stripZeros(String digits) {
        int i = 0;
        while (i < digits.length() && digits.charAt(i) == '0') {
            i++;
        }
        return digits.substring(i);
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private static int sign(int c) {
        return Integer.signum(c);
    }
}
