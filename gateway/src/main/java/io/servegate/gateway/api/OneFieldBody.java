package io.servegate.gateway.api;

import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A JSON object body read in one pass, with one field's value scanned straight from the body's
 * bytes by a {@link Scanner} instead of becoming tree nodes (a large model input: 784 numbers, or
 * an image as 200 KB of base64), and the object's other fields read by Jackson's streaming parser.
 *
 * @param others every other field of the object, as a tree
 * @param value  what the scanner made of the field's value
 * @param <V>    the scanned value's type
 */
record OneFieldBody<V>(ObjectNode others, V value) {

    /** Reads one JSON value where it lies. */
    @FunctionalInterface
    interface Scanner<V> {
        /**
         * The value that starts at {@code json[open]}, or null when it is not one this scanner
         * reads (the caller then reads the body as a tree, which says what is wrong).
         */
        Scanned<V> scan(byte[] json, int open);
    }

    /** A scanned value and the index just past it. */
    record Scanned<V>(V value, int end) {
    }

    /**
     * Reads {@code json} as an object whose {@code field} is a {@code token} that {@code scanner}
     * reads; null when it is anything else (malformed, not an object, the field absent,
     * repeated, of another kind, or refused by the scanner).
     */
    static <V> OneFieldBody<V> read(ObjectMapper mapper, byte[] json, String field, JsonToken token, char opener,
            Scanner<V> scanner) {
        try (JsonParser p = mapper.createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            ObjectNode others = mapper.createObjectNode();
            while (p.nextToken() == JsonToken.PROPERTY_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if (!field.equals(name)) {
                    // not mapper.readTree(p): it would reject the object's next field as trailing tokens
                    others.set(name, p.<JsonNode>readValueAsTree());
                    continue;
                }
                long open = p.currentTokenLocation().getByteOffset();
                if (value != token || open < 0 || json[(int) open] != opener) {
                    return null;
                }
                Scanned<V> scanned = scanner.scan(json, (int) open);
                if (scanned == null) {
                    return null;
                }
                OneFieldBody<V> body = new OneFieldBody<>(others, scanned.value());
                int after = NumberArray.skipWhitespace(json, scanned.end());
                if (after < json.length && json[after] == '}') {
                    return NumberArray.skipWhitespace(json, after + 1) == json.length ? body : null;
                }
                // the fields after the value, as an object of their own: {"k": v, ...}
                byte[] rest = fieldsAfter(json, after);
                if (rest == null) {
                    return null;
                }
                try (JsonParser r = mapper.createParser(rest)) {
                    r.nextToken();
                    return readOthers(r, others, field) ? body : null;
                }
            }
            return null;
        } catch (JacksonException e) {
            return null;
        }
    }

    /**
     * From a comma after the value: the next field and the rest of the body, behind a {@code {};
     * null when {@code json[i]} is not a comma followed by a field name.
     */
    private static byte[] fieldsAfter(byte[] json, int i) {
        if (i >= json.length || json[i] != ',') {
            return null;
        }
        int next = NumberArray.skipWhitespace(json, i + 1);
        if (next >= json.length || json[next] != '"') {
            return null;
        }
        byte[] rest = new byte[1 + json.length - next];
        rest[0] = '{';
        System.arraycopy(json, next, rest, 1, json.length - next);
        return rest;
    }

    /** The remaining fields into {@code others}; false if {@code field} comes again or the object is not well-formed. */
    private static boolean readOthers(JsonParser p, ObjectNode others, String field) {
        while (p.nextToken() == JsonToken.PROPERTY_NAME) {
            String name = p.currentName();
            if (field.equals(name)) {
                return false;
            }
            p.nextToken();
            others.set(name, p.<JsonNode>readValueAsTree());
        }
        return p.currentToken() == JsonToken.END_OBJECT && p.nextToken() == null;
    }
}
