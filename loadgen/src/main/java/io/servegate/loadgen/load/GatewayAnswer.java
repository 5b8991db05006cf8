package io.servegate.loadgen.load;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The gateway's answer to one {@code POST /{app}/predict}: a prediction, or the app's default
 * output with the gateway's explanation of why.
 *
 * @param output the output, as JSON text
 * @param isDefault whether it is the app's default output
 * @param explanation the default's explanation, null for a prediction
 */
public record GatewayAnswer(String output, boolean isDefault, String explanation) {

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * Reads a query response.
     *
     * @throws IllegalStateException if the status is not 200 or the body is not a query answer
     */
    public static GatewayAnswer parse(int status, byte[] body) {
        JsonNode n = okJson(status, body);
        JsonNode isDefault = n == null ? null : n.get("default");
        if (isDefault == null || !isDefault.isBoolean() || !n.has("output")) {
            throw new IllegalStateException("not a query answer: " + text(body));
        }
        JsonNode explanation = n.get("default_explanation");
        return new GatewayAnswer(n.get("output").toString(), isDefault.booleanValue(),
                explanation == null || explanation.isNull() ? null : explanation.asText());
    }

    /**
     * Reads an Open Inference Protocol REST infer response: its first output tensor's data is the
     * prediction (never a default).
     *
     * @throws IllegalStateException if the status is not 200 or the body is not an infer response
     */
    public static GatewayAnswer parseOipInfer(int status, byte[] body) {
        JsonNode n = okJson(status, body);
        JsonNode data = n == null ? null : n.path("outputs").path(0).get("data");
        if (data == null || !data.isArray()) {
            throw new IllegalStateException("not an infer response: " + text(body));
        }
        return new GatewayAnswer(data.toString(), false, null);
    }

    /** The body of a 200 answer as JSON; otherwise an exception quoting the body. */
    private static JsonNode okJson(int status, byte[] body) {
        if (status != 200) {
            throw new IllegalStateException("HTTP " + status + ": " + text(body));
        }
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            throw new IllegalStateException("not JSON: " + text(body), e);
        }
    }

    /** The body as text, abbreviated for an error message. */
    private static String text(byte[] body) {
        String s = new String(body, StandardCharsets.UTF_8);
        return s.length() <= 300 ? s : s.substring(0, 300) + "...";
    }
}
