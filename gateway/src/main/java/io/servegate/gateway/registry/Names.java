package io.servegate.gateway.registry;

/**
 * Name validation for apps, models, versions and other registry names, used by the API layer
 * and by the registry itself.
 *
 * <p>The rule is Clipper's DNS-1123-like one: 1 to 63 characters from {@code a-z}, {@code 0-9},
 * {@code -}, {@code .} and {@code _}, starting and ending with a lower-case letter or digit.
 * Upper case is deliberately <em>not</em> allowed (as in Clipper). On top of that, {@code ..} is
 * refused so that a name can never act as a relative path. Names therefore never contain
 * {@code :} or {@code /}, which lets the registry use {@code name:version} as a key.
 */
public final class Names {

    /** The longest allowed name. */
    public static final int MAX_LENGTH = 63;

    private Names() {
    }

    /**
     * Checks a name.
     *
     * @param kind what is being named, for the message: {@code "app"}, {@code "model"}, ...
     * @param name the name to check
     * @return {@code name}, unchanged
     * @throws IllegalArgumentException naming the problem unless the name matches
     *                                  {@code [a-z0-9]([-a-z0-9._]*[a-z0-9])?}, is at most 63
     *                                  characters long and contains no {@code ..}
     */
    public static String requireValid(String kind, String name) {
        String problem = problem(name);
        if (problem != null) {
            throw new IllegalArgumentException("invalid " + kind + " name "
                    + (name == null ? "" : quote(name) + " ") + problem);
        }
        return name;
    }

    /** @return whether {@link #requireValid} would accept {@code name} */
    public static boolean isValid(String name) {
        return problem(name) == null;
    }

    private static String problem(String name) {
        if (name == null) {
            return "is missing (null)";
        }
        if (name.isEmpty()) {
            return "is empty; names are 1 to " + MAX_LENGTH + " characters";
        }
        if (name.length() > MAX_LENGTH) {
            return "is " + name.length() + " characters long; at most " + MAX_LENGTH + " are allowed";
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c >= 'A' && c <= 'Z') {
                return "contains upper-case '" + c + "'; names must be lower case (Clipper's naming rule)";
            }
            if (!allowed(c)) {
                String what = Character.isISOControl(c) ? "control character " + unicode(c)
                        : Character.isWhitespace(c) ? "whitespace " + unicode(c)
                        : "illegal character '" + c + "' (" + unicode(c) + ")";
                return "contains " + what + " at position " + i
                        + "; allowed are a-z, 0-9, '-', '.' and '_'";
            }
        }
        if (name.contains("..")) {
            return "contains \"..\"";
        }
        if (!alnum(name.charAt(0))) {
            return "starts with '" + name.charAt(0) + "'; it must start with a lower-case letter or digit";
        }
        if (!alnum(name.charAt(name.length() - 1))) {
            return "ends with '" + name.charAt(name.length() - 1)
                    + "'; it must end with a lower-case letter or digit";
        }
        return null;
    }

    private static boolean alnum(char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    }

    private static boolean allowed(char c) {
        return alnum(c) || c == '-' || c == '.' || c == '_';
    }

    private static String unicode(char c) {
        return String.format("U+%04X", (int) c);
    }

    /**
     * Text from a request as an error message may show it: cut to {@code max} characters, with an
     * ellipsis where it was cut, and anything outside printable ASCII escaped ({@code \\u0000}),
     * so that a message stays short and readable whatever a client sent.
     */
    public static String brief(String text, int max) {
        StringBuilder sb = new StringBuilder(Math.min(text.length(), max) + 1);
        for (int i = 0; i < Math.min(text.length(), max); i++) {
            char c = text.charAt(i);
            sb.append(c < 0x20 || c > 0x7e ? String.format("\\u%04x", (int) c) : String.valueOf(c));
        }
        return text.length() > max ? sb.append('\u2026').toString() : sb.toString();
    }

    /** Quotes a name for a message, escaping anything outside printable ASCII. */
    private static String quote(String name) {
        StringBuilder sb = new StringBuilder(name.length() + 2).append('"');
        int limit = Math.min(name.length(), 80);
        for (int i = 0; i < limit; i++) {
            char c = name.charAt(i);
            if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        if (limit < name.length()) {
            sb.append("...");
        }
        return sb.append('"').toString();
    }
}
