package io.servegate.gateway.api;

import tools.jackson.core.JsonToken;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A JSON object body read in one pass, with one field that is a flat array of numbers (a model
 * input: 784 pixels for Fashion-MNIST) kept as a {@code double[]} instead of a tree node per
 * element. Building and then walking those nodes was most of the JSON cost of a feedback request.
 * The object's other fields go through Jackson's streaming parser ({@link OneFieldBody}); the array
 * itself is scanned straight from the body's bytes, each number converted where it lies
 * ({@link DecimalText}), since tokenizing the numbers and copying each one's text for conversion
 * was most of what remained.
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
        OneFieldBody<NumberArray> body = OneFieldBody.read(mapper, json, field, JsonToken.START_ARRAY, '[',
                (bytes, open) -> {
                    NumberArray array = NumberArray.scan(bytes, open);
                    return array == null ? null : new OneFieldBody.Scanned<>(array, array.end());
                });
        return body == null ? null
                : new NumericFieldBody(body.others(), body.value().values(), body.value().integral());
    }

    /** The other fields' value of {@code name}, or null. */
    public JsonNode get(String name) {
        return others.get(name);
    }
}
