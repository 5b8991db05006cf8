package io.servegate.gateway.api;

import java.util.Arrays;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A JSON object body read in one streaming pass, with one field that is a flat array of numbers
 * (a model input: 784 pixels for Fashion-MNIST) kept as a {@code double[]} instead of a tree node
 * per element. Building and then walking those nodes was most of the JSON cost of a feedback
 * request (a JFR profile of the feedback benchmark put JSON parsing at about a fifth of the
 * gateway's CPU).
 *
 * @param others   every other field of the object, as a tree
 * @param numbers  the field's numbers, each as the double the tree would have held
 * @param integral whether every number was an integer that fits 32 bits (what an {@code ints} input needs)
 */
public record NumericFieldBody(ObjectNode others, double[] numbers, boolean integral) {

    /**
     * Reads {@code json} as an object whose {@code field} is an array of numbers; null when it is
     * anything else (malformed, not an object, the field absent, repeated, nested or not all
     * numbers), which the caller then reads as a tree to say precisely what is wrong. The
     * body's size is bounded by the codec configuration, and so is the array.
     */
    public static NumericFieldBody read(ObjectMapper mapper, byte[] json, String field) {
        try (JsonParser p = mapper.createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            ObjectNode others = mapper.createObjectNode();
            double[] numbers = null;
            int n = 0;
            boolean integral = true;
            while (p.nextToken() == JsonToken.PROPERTY_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if (!field.equals(name)) {
                    // not mapper.readTree(p): it would reject the object's next field as trailing tokens
                    others.set(name, p.<JsonNode>readValueAsTree());
                    continue;
                }
                if (numbers != null || value != JsonToken.START_ARRAY) {
                    return null;
                }
                numbers = new double[1024];
                for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
                    if (t != JsonToken.VALUE_NUMBER_INT && t != JsonToken.VALUE_NUMBER_FLOAT) {
                        return null;
                    }
                    integral &= t == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.INT;
                    if (n == numbers.length) {
                        numbers = Arrays.copyOf(numbers, 2 * n);
                    }
                    numbers[n++] = t == JsonToken.VALUE_NUMBER_FLOAT
                            ? DecimalText.toDouble(p.getTextCharacters(), p.getTextOffset(), p.getTextLength())
                            : p.getDoubleValue();
                }
            }
            if (numbers == null || n == 0 || p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
                return null;
            }
            return new NumericFieldBody(others, Arrays.copyOf(numbers, n), integral);
        } catch (JacksonException e) {
            return null;
        }
    }

    /** The other fields' value of {@code name}, or null. */
    public JsonNode get(String name) {
        return others.get(name);
    }
}
