package io.servegate.gateway.selection;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Store keys for an application and context: {@code app:context}, each percent-encoded so that
 * neither contains {@code :}, with the reserved token {@value #APP_WIDE} (which no encoded
 * context can equal, since {@code @} is always escaped) for the application-wide state.
 */
final class StateKeys {

    static final String APP_WIDE = "@";
    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private StateKeys() {
    }

    static String key(String app, String context) {
        if (app == null || app.isBlank()) {
            throw new IllegalArgumentException("app must not be null or blank");
        }
        return encode(app) + ":" + (context == null || context.isEmpty() ? APP_WIDE : encode(context));
    }

    /** Percent-encodes every UTF-8 byte outside {@code A-Z a-z 0-9 - . _ ~}. */
    static String encode(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '.' || c == '_' || c == '~') {
                sb.append((char) c);
            } else {
                sb.append('%').append(HEX[c >> 4]).append(HEX[c & 0xf]);
            }
        }
        return sb.toString();
    }

    /** A fresh version for a newly created state: positive, unpredictable, far from overflow. */
    static long initialVersion() {
        return ThreadLocalRandom.current().nextLong(1, 1L << 40);
    }
}
