package io.servegate.gateway.api.fuzz;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * A seeded generator of JSON texts, valid and not: random values, and mutations of a valid body
 * (fields dropped, duplicated or retyped, odd numbers, truncation, flipped bytes). Bodies are
 * built as trees of {@link Obj} (ordered, duplicates allowed), {@link List}, strings, numbers,
 * booleans, null and {@link Raw} (emitted verbatim, for tokens no Java value writes: {@code 1e400},
 * {@code NaN}, 30-digit integers).
 */
public final class JsonFuzz {

    /** A JSON object as ordered entries, so duplicate keys can be written. */
    public static final class Obj extends ArrayList<Map.Entry<String, Object>> {
        private static final long serialVersionUID = 1L;

        public Obj with(String key, Object value) {
            add(Map.entry(key, value == null ? NULL : value));
            return this;
        }
    }

    /** Text written as is. */
    public record Raw(String text) {
    }

    /** JSON null (Map.entry refuses null values). */
    public static final Raw NULL = new Raw("null");

    private static final String[] ODD_NUMBERS = {"1e400", "-1e400", "1e-400", "-0", "0.0", "NaN", "Infinity",
        "-Infinity", "99999999999999999999999999999", "-9223372036854775809", "9223372036854775808",
        "2147483648", "-2147483649", "3.4028236e38", "1.7976931348623157e308", "4.9e-324", "0x10", "01", "+1",
        "1.", ".5", "1e", "--1", "1" + "0".repeat(1200), "0." + "1".repeat(1200),
        // beyond the double range, at its edges, and forms strict JSON refuses
        "2" + "0".repeat(308), "-" + "9".repeat(309), "9".repeat(999), "1" + "0".repeat(308), "1E+400", "-1e-400",
        "1e99999999999", "0.5e-99999999999", "1" + "0".repeat(308) + ".5", "0." + "3".repeat(900), "00", "-01",
        "1.5e", "1e+", "-", "1_000", "1,5", "0.0e0", "123456789012345678901234567890e-10"};

    private static final String[] ODD_STRINGS = {"", " ", "..", "../..", "a,b", "a:b", "a/b", "\u0000", "\u0007bell",
        "\r\n", "\t", "é", "日本語", "\uD83D\uDE00", "\uD800", "\uFFFF", "%2e%2e", "%00", "a".repeat(70),
        "A", "-a", "a-", "a..b", "null", "true", "{}", "[]", "\\", "\"", "<script>", "${jndi:x}", "#{1+1}",
        "===", "!!!!", "AAAA", "AA=A", "QUJD", "QUJD\n", "Zm9v=", "Zm9", "@@@@"};

    private final Random random;
    /** Mutations keep arrays' lengths (see InputFuzzTest on mixed-length batches). */
    private boolean keepLengths;

    public JsonFuzz(long seed) {
        this.random = new Random(seed);
    }

    public void keepLengths(boolean keep) {
        this.keepLengths = keep;
    }

    public Random random() {
        return random;
    }

    public int nextInt(int bound) {
        return random.nextInt(bound);
    }

    public boolean chance(double p) {
        return random.nextDouble() < p;
    }

    public <T> T pick(List<T> options) {
        return options.get(random.nextInt(options.size()));
    }

    public String pick(String... options) {
        return options[random.nextInt(options.length)];
    }

    /** A random JSON value nested at most {@code depth} deep. */
    public Object value(int depth) {
        int kind = random.nextInt(depth <= 0 ? 7 : 9);
        return switch (kind) {
            case 0 -> string();
            case 1 -> random.nextInt();
            case 2 -> random.nextLong();
            case 3 -> random.nextGaussian() * Math.pow(10, random.nextInt(20) - 10);
            case 4 -> new Raw(pick(ODD_NUMBERS));
            case 5 -> random.nextBoolean();
            case 6 -> NULL;
            case 7 -> {
                List<Object> list = new ArrayList<>();
                for (int i = random.nextInt(5); i > 0; i--) {
                    list.add(value(depth - 1));
                }
                yield list;
            }
            default -> {
                Obj o = new Obj();
                for (int i = random.nextInt(4); i > 0; i--) {
                    o.with(string(), value(depth - 1));
                }
                yield o;
            }
        };
    }

    /** Odd strings, random unicode (controls and lone surrogates included) and plain words. */
    public String string() {
        return switch (random.nextInt(3)) {
            case 0 -> pick(ODD_STRINGS);
            case 1 -> {
                StringBuilder sb = new StringBuilder();
                for (int i = random.nextInt(12); i > 0; i--) {
                    sb.append((char) (random.nextBoolean() ? random.nextInt(0x80) : random.nextInt(0x10000)));
                }
                yield sb.toString();
            }
            default -> "w" + random.nextInt(1000);
        };
    }

    /** A numeric vector, sometimes with odd elements. */
    public Object vector(int length, boolean odd) {
        List<Object> v = new ArrayList<>(length);
        for (int i = 0; i < length; i++) {
            v.add(odd && random.nextInt(8) == 0 ? value(1) : (Object) (random.nextFloat() * 10 - 5));
        }
        return v;
    }

    /** Applies 1 to 3 tree mutations to a copy of {@code body}. */
    public Obj mutate(Obj body) {
        Obj out = copy(body);
        for (int n = 1 + random.nextInt(3); n > 0; n--) {
            if (out.isEmpty()) {
                out.with(string(), value(2));
                continue;
            }
            int i = random.nextInt(out.size());
            Map.Entry<String, Object> e = out.get(i);
            switch (random.nextInt(7)) {
                case 0 -> out.remove(i);
                case 1 -> out.add(Map.entry(e.getKey(), value(2)));      // duplicate key, new value
                case 2 -> out.set(i, Map.entry(e.getKey(), value(3)));   // retyped
                case 3 -> out.set(i, Map.entry(e.getKey(), mutateInside(e.getValue())));
                case 4 -> out.with(string(), value(2));                   // unknown field
                case 5 -> out.set(i, Map.entry(string(), e.getValue()));  // renamed
                default -> out.set(i, Map.entry(e.getKey(), List.of(e.getValue()))); // wrapped in an array
            }
        }
        return out;
    }

    private Object mutateInside(Object v) {
        if (v instanceof List<?> list && !list.isEmpty()) {
            List<Object> copy = new ArrayList<>(list);
            int i = random.nextInt(copy.size());
            switch (random.nextInt(keepLengths ? 2 : 4)) {
                case 0 -> copy.set(i, new Raw(pick(ODD_NUMBERS)));
                case 1 -> copy.set(i, value(2));
                case 2 -> copy.remove(i);
                default -> copy.add(copy.get(i));
            }
            return copy;
        }
        if (v instanceof Obj o) {
            return mutate(o);
        }
        if (v instanceof String s) {
            return s.isEmpty() ? string() : s.substring(0, random.nextInt(s.length())) + string();
        }
        return value(1);
    }

    /** Text-level damage: truncation, flipped or inserted bytes, garbage around it. */
    public byte[] damage(byte[] text) {
        byte[] b = text.clone();
        switch (random.nextInt(6)) {
            case 0 -> {
                return java.util.Arrays.copyOf(b, b.length == 0 ? 0 : random.nextInt(b.length));
            }
            case 1 -> {
                for (int n = 1 + random.nextInt(3); n > 0 && b.length > 0; n--) {
                    b[random.nextInt(b.length)] ^= (byte) (1 << random.nextInt(8));
                }
                return b;
            }
            case 2 -> {
                int at = b.length == 0 ? 0 : random.nextInt(b.length);
                byte[] out = new byte[b.length + 1];
                System.arraycopy(b, 0, out, 0, at);
                out[at] = (byte) random.nextInt(256);
                System.arraycopy(b, at, out, at + 1, b.length - at);
                return out;
            }
            case 3 -> {
                return concat(new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF}, b);  // UTF-8 BOM
            }
            case 4 -> {
                return concat(b, pick(" x", "}", ",", "\u0000", "{}", " // c", "\n[1]").getBytes(StandardCharsets.UTF_8));
            }
            default -> {
                return concat("[".getBytes(StandardCharsets.UTF_8), concat(b, "]".getBytes(StandardCharsets.UTF_8)));
            }
        }
    }

    /** {@code depth} nested arrays or objects around a value. */
    public static String nested(int depth, boolean arrays) {
        StringBuilder sb = new StringBuilder(depth * 6 + 16);
        sb.append("{\"input\":");
        for (int i = 0; i < depth; i++) {
            sb.append(arrays ? "[" : "{\"a\":");
        }
        sb.append('1');
        for (int i = 0; i < depth; i++) {
            sb.append(arrays ? ']' : '}');
        }
        return sb.append('}').toString();
    }

    public static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Writes a tree as JSON text; strings are escaped by the rules of RFC 8259 (lone surrogates kept as escapes). */
    public static String write(Object v) {
        StringBuilder sb = new StringBuilder();
        write(v, sb);
        return sb.toString();
    }

    private static void write(Object v, StringBuilder sb) {
        if (v == null || v == NULL) {
            sb.append("null");
        } else if (v instanceof Raw r) {
            sb.append(r.text());
        } else if (v instanceof String s) {
            sb.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == '"' || c == '\\') {
                    sb.append('\\').append(c);
                } else if (c < 0x20 || Character.isSurrogate(c)) {
                    sb.append(String.format("\\u%04x", (int) c));
                } else {
                    sb.append(c);
                }
            }
            sb.append('"');
        } else if (v instanceof Obj o) {
            sb.append('{');
            for (int i = 0; i < o.size(); i++) {
                if (i > 0) {
                    sb.append(',');
                }
                write(o.get(i).getKey(), sb);
                sb.append(':');
                write(o.get(i).getValue(), sb);
            }
            sb.append('}');
        } else if (v instanceof List<?> l) {
            sb.append('[');
            for (int i = 0; i < l.size(); i++) {
                if (i > 0) {
                    sb.append(',');
                }
                write(l.get(i), sb);
            }
            sb.append(']');
        } else if (v instanceof float[] f) {
            List<Object> l = new ArrayList<>();
            for (float x : f) {
                l.add(x);
            }
            write(l, sb);
        } else {
            sb.append(v); // numbers and booleans
        }
    }

    private static Obj copy(Obj o) {
        Obj c = new Obj();
        c.addAll(o);
        return c;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
