package io.servegate.gateway.api;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ReactiveHttpOutputMessage;
import org.springframework.web.reactive.function.BodyInserter;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.node.IntNode;

/**
 * Reads request bodies as JSON objects and their fields, with errors that say what is wrong, and
 * writes JSON answers.
 */
public final class JsonBodies {

    private final ObjectMapper mapper;

    public JsonBodies(ObjectMapper mapper) {
        this.mapper = mapper;
    }

    /** The body as a JSON object (size-limited by the codec configuration). */
    public Mono<JsonNode> object(ServerRequest request) {
        return request.bodyToMono(String.class)
                .switchIfEmpty(Mono.error(() -> ApiException.badRequest("the request body is empty; send a JSON object")))
                .map(this::parseObject);
    }

    /** The body's bytes (size-limited by the codec configuration), for {@link #numericField}. */
    public Mono<byte[]> bytes(ServerRequest request) {
        return request.bodyToMono(byte[].class)
                .switchIfEmpty(Mono.error(() -> ApiException.badRequest("the request body is empty; send a JSON object")));
    }

    /** A raw body's bytes (size-limited by the codec configuration), for one binary input. */
    public Mono<byte[]> raw(ServerRequest request) {
        return request.bodyToMono(byte[].class)
                .switchIfEmpty(Mono.error(() -> ApiException.badRequest("the request body is empty; send the input's "
                        + "bytes")));
    }

    /** {@link NumericFieldBody#read} with this mapper: null when the body is not such an object. */
    public NumericFieldBody numericField(byte[] body, String field) {
        return NumericFieldBody.read(mapper, body, field);
    }

    /**
     * {@code json} as an object whose {@code field} is a base64 string, decoded from the bytes
     * where it lies ({@link Base64Text}); null when it is anything else, for the caller to read as
     * a tree.
     */
    OneFieldBody<byte[]> base64Field(byte[] json, String field) {
        return OneFieldBody.read(mapper, json, field, JsonToken.VALUE_STRING, '"', Base64Text::scan);
    }

    /** The body as a JSON object, with the errors of {@link #object}. */
    public JsonNode parseObject(byte[] body) {
        JsonNode node;
        try {
            node = mapper.readTree(body);
        } catch (JacksonException e) {
            throw ApiException.badRequest(MalformedJson.describe(e));
        }
        return requireObject(node);
    }

    /** {@code length} bytes from {@code offset} as a JSON object, with the errors of {@link #object}. */
    public JsonNode parseObject(byte[] body, int offset, int length) {
        JsonNode node;
        try {
            node = mapper.readTree(body, offset, length);
        } catch (JacksonException e) {
            throw ApiException.badRequest(MalformedJson.describe(e));
        }
        return requireObject(node);
    }

    JsonNode parseObject(String body) {
        JsonNode node;
        try {
            node = mapper.readTree(body);
        } catch (JacksonException e) {
            throw ApiException.badRequest(MalformedJson.describe(e));
        }
        return requireObject(node);
    }

    private static JsonNode requireObject(JsonNode node) {
        if (node == null || !node.isObject()) {
            throw ApiException.badRequest("the request body must be a JSON object");
        }
        return node;
    }

    /**
     * A JSON answer, serialised here with the same mapper: the framework's generic encoder
     * resolves the body's type and searches its writers on every response, which on the query
     * path cost more CPU than serialising the answer itself.
     */
    public Mono<ServerResponse> respond(HttpStatus status, Object body) {
        return respondBytes(status, mapper.writeValueAsBytes(body));
    }

    private static Mono<ServerResponse> respondBytes(HttpStatus status, byte[] bytes) {
        BodyInserter<byte[], ReactiveHttpOutputMessage> inserter =
                (message, context) -> message.writeWith(Mono.fromSupplier(() -> message.bufferFactory().wrap(bytes)));
        return ServerResponse.status(status).contentType(MediaType.APPLICATION_JSON).contentLength(bytes.length)
                .body(inserter);
    }

    /**
     * A JSON answer that {@code writer} writes to a generator of this mapper, for answers made on
     * every query: no map or tree of it is built first.
     */
    public Mono<ServerResponse> respond(HttpStatus status, Consumer<JsonGenerator> writer) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(128);
        try (JsonGenerator g = mapper.createGenerator(out)) {
            writer.accept(g);
        }
        return respondBytes(status, out.toByteArray());
    }

    /** {@code body} serialised with this mapper. */
    public byte[] bytesOf(Object body) {
        return mapper.writeValueAsBytes(body);
    }

    /** Parses text as JSON if it is JSON, for nesting model outputs; null otherwise. */
    public JsonNode tryParse(String text) {
        if (text == null || text.isEmpty()) {
            return null;
        }
        JsonNode small = smallInteger(text);
        if (small != null) {
            return small;
        }
        char c = text.charAt(0);
        if (!(c == '{' || c == '[' || c == '"' || c == '-' || Character.isDigit(c) || text.equals("true")
                || text.equals("false") || text.equals("null"))) {
            return null;
        }
        try {
            return mapper.readTree(text);
        } catch (JacksonException e) {
            return null;
        }
    }

    /**
     * A class label such as {@code 7} or {@code -1} (at most nine digits, no leading zero) as the
     * node the parser would make of it, without a parser: most models answer one, and parsing it
     * was a visible share of the gateway's CPU per query (docs/performance.md).
     */
    private static JsonNode smallInteger(String text) {
        int n = text.length();
        int i = text.charAt(0) == '-' ? 1 : 0;
        if (n == i || n - i > 9 || (text.charAt(i) == '0' && n - i > 1)) {
            return null;
        }
        int value = 0;
        for (int k = i; k < n; k++) {
            char d = text.charAt(k);
            if (d < '0' || d > '9') {
                return null;
            }
            value = value * 10 + (d - '0');
        }
        return IntNode.valueOf(i == 1 ? -value : value);
    }

    /**
     * A JSON number as a double, infinite when it lies beyond the double range: Jackson's
     * {@link JsonNode#doubleValue} throws for such integers instead, which is no answer to give a
     * client.
     */
    public static double toDouble(JsonNode number) {
        return number.isBigInteger() ? number.bigIntegerValue().doubleValue()
                : number.isBigDecimal() ? number.decimalValue().doubleValue() : number.doubleValue();
    }

    public static String requiredString(JsonNode body, String field) {
        JsonNode n = body.get(field);
        if (n == null || n.isNull()) {
            throw ApiException.badRequest("missing field '" + field + "'");
        }
        if (!n.isString()) {
            throw ApiException.badRequest("field '" + field + "' must be a string");
        }
        return n.stringValue();
    }

    public static String optionalString(JsonNode body, String field, String fallback) {
        JsonNode n = body.get(field);
        if (n == null || n.isNull()) {
            return fallback;
        }
        if (!n.isString()) {
            throw ApiException.badRequest("field '" + field + "' must be a string");
        }
        return n.stringValue();
    }

    public static long requiredLong(JsonNode body, String field) {
        JsonNode n = body.get(field);
        if (n == null || n.isNull()) {
            throw ApiException.badRequest("missing field '" + field + "'");
        }
        if (!n.isIntegralNumber() || !n.canConvertToLong()) {
            throw ApiException.badRequest("field '" + field + "' must be an integer");
        }
        return n.longValue();
    }

    /** An optional integer in {@code min..max}; {@code fallback} when absent or null. */
    public static long optionalLong(JsonNode body, String field, long min, long max, long fallback) {
        JsonNode n = body.get(field);
        if (n == null || n.isNull()) {
            return fallback;
        }
        long v = requiredLong(body, field);
        if (v < min || v > max) {
            throw ApiException.badRequest("field '" + field + "' must be in " + min + ".." + max + ", got " + v);
        }
        return v;
    }

    /** Refuses a field outside {@code known}, naming it and the known ones. */
    public static void onlyFields(JsonNode body, String what, java.util.Collection<String> known) {
        for (String f : body.propertyNames()) {
            if (!known.contains(f)) {
                throw ApiException.badRequest("unknown field '" + f + "' in " + what + "; known are "
                        + String.join(", ", known));
            }
        }
    }

    public static boolean optionalBoolean(JsonNode body, String field) {
        JsonNode n = body.get(field);
        if (n == null || n.isNull()) {
            return false;
        }
        if (!n.isBoolean()) {
            throw ApiException.badRequest("field '" + field + "' must be true or false");
        }
        return n.booleanValue();
    }

    public static List<String> stringList(JsonNode body, String field, boolean required) {
        JsonNode n = body.get(field);
        if (n == null || n.isNull()) {
            if (required) {
                throw ApiException.badRequest("missing field '" + field + "'");
            }
            return List.of();
        }
        if (!n.isArray()) {
            throw ApiException.badRequest("field '" + field + "' must be an array of strings");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode e : n) {
            if (!e.isString()) {
                throw ApiException.badRequest("field '" + field + "' must be an array of strings");
            }
            out.add(e.stringValue());
        }
        return out;
    }
}
