package io.servegate.gateway.api;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.util.List;
import org.springframework.http.HttpHeaders;
import tools.jackson.databind.JsonNode;

/**
 * An OIP REST infer request body, in either form: all JSON, or (the binary tensor data
 * extension) a JSON header of {@code Inference-Header-Content-Length} bytes followed by the raw
 * tensors, each input's bytes in the order of {@code inputs} and as many as its
 * {@code parameters.binary_data_size}. Raw tensors are handed out as views of the received
 * bytes, not copies.
 */
final class OipInferBody {

    /** The request and response header that gives the JSON part's length in bytes. */
    static final String HEADER_LENGTH = "Inference-Header-Content-Length";
    static final String BINARY_DATA_SIZE = "binary_data_size";

    private final JsonNode header;
    private final byte[] body;
    private final int binaryStart;
    private final boolean binary;
    private int taken;

    private OipInferBody(JsonNode header, byte[] body, int binaryStart, boolean binary) {
        this.header = header;
        this.body = body;
        this.binaryStart = binaryStart;
        this.binary = binary;
    }

    /**
     * Splits {@code body} by the request's {@code Inference-Header-Content-Length}, if any.
     *
     * @throws ApiException 400 for a header length that is not a number of bytes within the body,
     *     or a JSON part that is not a JSON object
     */
    static OipInferBody parse(JsonBodies bodies, HttpHeaders headers, byte[] body) {
        List<String> values = headers.getOrEmpty(HEADER_LENGTH);
        if (values.isEmpty()) {
            JsonNode json;
            try {
                json = bodies.parseObject(body);
            } catch (ApiException e) {
                throw ApiException.badRequest(e.getMessage() + " (a body with binary tensor data after its JSON "
                        + "needs the " + HEADER_LENGTH + " header)");
            }
            return new OipInferBody(json, body, body.length, false);
        }
        if (values.size() > 1) {
            throw ApiException.badRequest("the " + HEADER_LENGTH + " header is given " + values.size() + " times");
        }
        long length;
        try {
            length = Long.parseLong(values.get(0).trim());
        } catch (NumberFormatException e) {
            throw ApiException.badRequest("the " + HEADER_LENGTH + " header must be a number of bytes, got '"
                    + brief(values.get(0)) + "'");
        }
        if (length <= 0) {
            throw ApiException.badRequest("the " + HEADER_LENGTH + " header must be positive, got " + length);
        }
        if (length > body.length) {
            throw ApiException.badRequest("the " + HEADER_LENGTH + " header says " + length
                    + " bytes of JSON, but the body has only " + body.length + " bytes");
        }
        return new OipInferBody(bodies.parseObject(body, 0, (int) length), body, (int) length, true);
    }

    /** The JSON object: the whole body, or its header part. */
    JsonNode json() {
        return header;
    }

    /** Whether the request came in the binary form (with a header length). */
    boolean binary() {
        return binary;
    }

    /**
     * The raw bytes of the input tensor {@code name}, whose JSON says it has {@code parameters}
     * (null when it has none): the next {@code binary_data_size} bytes after those of the inputs
     * before it; null when the input carries its data in JSON.
     *
     * @throws ApiException 400 when the size is not a non-negative integer, the request has no
     *     binary part, or the size runs past the body's end
     */
    ByteString take(String name, JsonNode parameters) {
        JsonNode size = parameters == null ? null : parameters.get(BINARY_DATA_SIZE);
        if (size == null || size.isNull()) {
            return null;
        }
        if (!size.isIntegralNumber() || !size.canConvertToLong() || size.longValue() < 0) {
            throw ApiException.badRequest("input '" + name + "': '" + BINARY_DATA_SIZE
                    + "' must be a non-negative integer");
        }
        if (!binary) {
            throw ApiException.badRequest("input '" + name + "' has '" + BINARY_DATA_SIZE + "' but the request has no "
                    + HEADER_LENGTH + " header to say where its JSON ends and the binary data begins");
        }
        long remaining = body.length - binaryStart - (long) taken;
        if (size.longValue() > remaining) {
            throw ApiException.badRequest("input '" + name + "' has " + BINARY_DATA_SIZE + " " + size.longValue()
                    + " but only " + remaining + " bytes of binary data remain after the JSON header");
        }
        int from = binaryStart + taken;
        taken += (int) size.longValue();
        return UnsafeByteOperations.unsafeWrap(body, from, (int) size.longValue());
    }

    /**
     * Checks that the inputs' sizes account for every byte after the JSON header.
     *
     * @throws ApiException 400 naming both counts when they differ
     */
    void requireAllTaken() {
        int binaryBytes = body.length - binaryStart;
        if (taken != binaryBytes) {
            throw ApiException.badRequest("the body holds " + binaryBytes + " bytes of binary data after its "
                    + binaryStart + "-byte JSON header (" + HEADER_LENGTH + "), but the inputs' " + BINARY_DATA_SIZE
                    + " add up to " + taken);
        }
    }

    private static String brief(String s) {
        return s.length() <= 32 ? s : s.substring(0, 32) + "...";
    }
}
