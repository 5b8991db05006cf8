package io.servegate.gateway.api;

import io.servegate.oip.client.TensorType;
import java.util.Base64;
import tools.jackson.databind.JsonNode;

/**
 * Turns one JSON input into the Java value of an app's input type: a JSON array of numbers for
 * ints, floats and doubles; a base64 string for bytes; a string for strings. Every mismatch is
 * an {@link ApiException} that names the problem and where it is.
 */
public final class InputParser {

    private final int maxLength;

    public InputParser(int maxLength) {
        this.maxLength = maxLength;
    }

    /**
     * Parses {@code node} and checks a numeric vector's or a byte string's length against
     * {@code expectedLength} (what the model's containers declare; -1 when unknown).
     */
    public Object parse(TensorType<?> type, JsonNode node, String where, int expectedLength) {
        Object value = parse(type, node, where);
        if (expectedLength > 0) {
            int length = value instanceof byte[] b ? b.length : type.numeric() ? node.size() : expectedLength;
            if (length != expectedLength) {
                throw ApiException.badRequest(RowChecks.lengthProblem("'" + where + "'",
                        type.numeric() ? "elements" : "bytes", length, expectedLength));
            }
        }
        return value;
    }

    /**
     * The input of a numeric type from the numbers of a {@link NumericFieldBody}, converted as
     * {@link #parse(TensorType, JsonNode, String, int)} converts a tree's; null when that would
     * reject them (or the type is not numeric), so that the caller parses the tree for the error.
     */
    public Object fromNumbers(TensorType<?> type, NumericFieldBody body, int expectedLength) {
        double[] numbers = body.numbers();
        if (numbers.length > maxLength || expectedLength > 0 && numbers.length != expectedLength) {
            return null;
        }
        for (double d : numbers) {
            if (!Double.isFinite(d)) {
                return null;
            }
        }
        switch (type.clipperName()) {
            case "ints" -> {
                if (!body.integral()) {
                    return null;
                }
                int[] v = new int[numbers.length];
                for (int i = 0; i < v.length; i++) {
                    v[i] = (int) numbers[i];
                }
                return v;
            }
            case "floats" -> {
                float[] v = new float[numbers.length];
                for (int i = 0; i < v.length; i++) {
                    if (Math.abs(numbers[i]) > Float.MAX_VALUE) {
                        return null;
                    }
                    v[i] = (float) numbers[i];
                }
                return v;
            }
            case "doubles" -> {
                return numbers.clone();
            }
            default -> {
                return null;
            }
        }
    }

    /**
     * Checks an input that arrived decoded (a binary tensor's row, a raw body) as {@link #parse}
     * checks a JSON one ({@link RowChecks}).
     *
     * @throws ApiException 400 naming the problem
     */
    public void requireValid(TensorType<?> type, Object value, String where, int expectedLength) {
        String problem = RowChecks.problem(value, where, type, expectedLength, maxLength);
        if (problem != null) {
            throw ApiException.badRequest(problem);
        }
    }

    /** Parses {@code node}; {@code where} names it in errors, e.g. {@code input} or {@code input_batch[3]}. */
    public Object parse(TensorType<?> type, JsonNode node, String where) {
        if (node == null || node.isNull() || node.isMissingNode()) {
            throw ApiException.badRequest("'" + where + "' is missing");
        }
        return switch (type.clipperName()) {
            case "ints" -> ints(vector(node, where, type), where);
            case "floats" -> floats(vector(node, where, type), where);
            case "doubles" -> doubles(vector(node, where, type), where);
            case "bytes" -> bytes(node, where);
            case "strings" -> string(node, where);
            default -> throw new IllegalStateException("unknown input type " + type);
        };
    }

    private JsonNode vector(JsonNode node, String where, TensorType<?> type) {
        if (!node.isArray()) {
            throw ApiException.badRequest("'" + where + "' must be a JSON array of numbers for input type '"
                    + type.clipperName() + "'");
        }
        if (node.isEmpty()) {
            throw ApiException.badRequest("'" + where + "' is empty");
        }
        if (node.size() > maxLength) {
            throw ApiException.badRequest("'" + where + "' has " + node.size() + " elements; the limit is " + maxLength);
        }
        return node;
    }

    private static int[] ints(JsonNode node, String where) {
        int[] v = new int[node.size()];
        for (int i = 0; i < v.length; i++) {
            JsonNode e = node.get(i);
            if (!e.isIntegralNumber() || !e.canConvertToInt()) {
                throw ApiException.badRequest("'" + where + "[" + i + "]' must be a 32-bit integer, got " + brief(e));
            }
            v[i] = e.intValue();
        }
        return v;
    }

    private static float[] floats(JsonNode node, String where) {
        float[] v = new float[node.size()];
        for (int i = 0; i < v.length; i++) {
            double d = number(node.get(i), where, i);
            if (Math.abs(d) > Float.MAX_VALUE) {
                throw ApiException.badRequest("'" + where + "[" + i + "]' is out of the float range");
            }
            v[i] = (float) d;
        }
        return v;
    }

    private static double[] doubles(JsonNode node, String where) {
        double[] v = new double[node.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = number(node.get(i), where, i);
        }
        return v;
    }

    private static double number(JsonNode e, String where, int i) {
        if (!e.isNumber()) {
            throw ApiException.badRequest("'" + where + "[" + i + "]' must be a number, got " + brief(e));
        }
        double d = JsonBodies.toDouble(e);
        if (!Double.isFinite(d)) {
            throw ApiException.badRequest("'" + where + "[" + i + "]' is not a finite number (beyond the double "
                    + "range)");
        }
        return d;
    }

    private byte[] bytes(JsonNode node, String where) {
        if (!node.isString()) {
            throw ApiException.badRequest("'" + where + "' must be a base64 string for input type 'bytes', got "
                    + brief(node));
        }
        byte[] b;
        try {
            b = Base64.getDecoder().decode(node.stringValue());
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("'" + where + "' is not valid base64: " + e.getMessage());
        }
        if (b.length > maxLength) {
            throw ApiException.badRequest("'" + where + "' has " + b.length + " bytes; the limit is " + maxLength);
        }
        return b;
    }

    private String string(JsonNode node, String where) {
        if (!node.isString()) {
            throw ApiException.badRequest("'" + where + "' must be a string for input type 'strings', got "
                    + brief(node));
        }
        String s = node.stringValue();
        if (s.length() > maxLength) {
            throw ApiException.badRequest("'" + where + "' has " + s.length() + " characters; the limit is "
                    + maxLength);
        }
        return s;
    }

    private static String brief(JsonNode e) {
        String kind = e.isArray() ? "an array" : e.isObject() ? "an object" : e.isString() ? "a string"
                : e.isBoolean() ? "a boolean" : e.isNull() ? "null" : e.isNumber() ? "the number " + e : "a value";
        return kind;
    }
}
