package io.servegate.gateway.api;

import java.util.Arrays;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A JSON object body read in one pass, with one field that is a flat array of numbers (a model
 * input: 784 pixels for Fashion-MNIST) kept as a {@code double[]} instead of a tree node per
 * element. Building and then walking those nodes was most of the JSON cost of a feedback request.
 * The object's other fields go through Jackson's streaming parser; the array itself is scanned
 * straight from the body's bytes, each number converted where it lies ({@link DecimalText}), since
 * tokenizing the numbers and copying each one's text for conversion was most of what remained.
 *
 * @param others   every other field of the object, as a tree
 * @param numbers  the field's numbers, each as the double the tree would have held
 * @param integral whether every number was an integer that fits 32 bits (what an {@code ints} input needs)
 */
public record NumericFieldBody(ObjectNode others, double[] numbers, boolean integral) {

    /**
     * Reads {@code json} as an object whose {@code field} is an array of numbers; null when it is
     * anything else (malformed, not an object, the field absent, repeated, nested or not all
     * numbers, or a number in a form strict JSON does not allow), which the caller then reads as
     * a tree to say precisely what is wrong. The body's size is bounded by the codec
     * configuration, and so is the array.
     */
    public static NumericFieldBody read(ObjectMapper mapper, byte[] json, String field) {
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
                if (value != JsonToken.START_ARRAY || open < 0 || json[(int) open] != '[') {
                    return null;
                }
                NumberArray array = NumberArray.scan(json, (int) open);
                if (array == null) {
                    return null;
                }
                NumericFieldBody body = new NumericFieldBody(others, array.values(), array.integral());
                int after = NumberArray.skipWhitespace(json, array.end());
                if (after < json.length && json[after] == '}') {
                    return NumberArray.skipWhitespace(json, after + 1) == json.length ? body : null;
                }
                // the fields after the array, as an object of their own: {"k": v, ...}
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

    /** The other fields' value of {@code name}, or null. */
    public JsonNode get(String name) {
        return others.get(name);
    }

    /**
     * From a comma after the array: the next field and the rest of the body, behind a {@code {};
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
