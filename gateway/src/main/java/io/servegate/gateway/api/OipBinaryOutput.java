package io.servegate.gateway.api;

import io.servegate.oip.client.EncodedTensor;
import io.servegate.oip.client.TensorType;
import java.util.List;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ReactiveHttpOutputMessage;
import org.springframework.web.reactive.function.BodyInserter;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/**
 * Outputs returned as binary tensor data: whether an OIP REST request asks for them, and the
 * answer that carries them (a JSON header of {@code Inference-Header-Content-Length} bytes, then
 * the raw tensor).
 */
final class OipBinaryOutput {

    static final String BINARY_DATA = "binary_data";
    static final String BINARY_DATA_OUTPUT = "binary_data_output";
    private static final String OUTPUT = "output";

    private OipBinaryOutput() {
    }

    /**
     * Whether the request asks for its output as binary data: {@code binary_data} in the output's
     * parameters, which overrides the request parameter {@code binary_data_output}.
     *
     * @throws ApiException 400 for an output other than the model's one, or a flag that is not a boolean
     */
    static boolean requested(JsonNode request) {
        boolean binary = flag(request.get("parameters"), BINARY_DATA_OUTPUT, "the request's parameters");
        JsonNode outputs = request.get("outputs");
        if (outputs == null || outputs.isNull()) {
            return binary;
        }
        if (!outputs.isArray()) {
            throw ApiException.badRequest("'outputs' must be an array of requested outputs");
        }
        for (JsonNode o : outputs) {
            String name = o.isObject() ? JsonBodies.requiredString(o, "name") : null;
            if (!OUTPUT.equals(name)) {
                throw ApiException.badRequest("the model has no output " + (name == null ? "of that form" : "'"
                        + name + "'") + "; its only output is '" + OUTPUT + "'");
            }
            JsonNode parameters = o.get("parameters");
            if (parameters != null && parameters.has(BINARY_DATA)) {
                binary = flag(parameters, BINARY_DATA, "output '" + OUTPUT + "' parameters");
            }
        }
        return binary;
    }

    private static boolean flag(JsonNode parameters, String name, String where) {
        if (parameters == null || parameters.isNull()) {
            return false;
        }
        if (!parameters.isObject()) {
            throw ApiException.badRequest(where + " must be an object");
        }
        JsonNode flag = parameters.get(name);
        if (flag == null || flag.isNull()) {
            return false;
        }
        if (!flag.isBoolean()) {
            throw ApiException.badRequest("'" + name + "' in " + where + " must be true or false");
        }
        return flag.booleanValue();
    }

    /**
     * 200 with {@code header} plus the outputs as one BYTES tensor [N] in binary form (each
     * element's 4-byte little-endian length, then its UTF-8 bytes).
     */
    static Mono<ServerResponse> respond(JsonBodies bodies, Map<String, Object> header, List<String> outputs) {
        EncodedTensor tensor = TensorType.STRINGS.encode(outputs);
        header.put("outputs", List.of(Map.of("name", OUTPUT, "datatype", tensor.datatype(),
                "shape", tensor.shape(), "parameters", Map.of(OipInferBody.BINARY_DATA_SIZE, tensor.raw().size()))));
        byte[] json = bodies.bytesOf(header);
        BodyInserter<Object, ReactiveHttpOutputMessage> inserter = (message, context) -> message.writeWith(
                Flux.just(message.bufferFactory().wrap(json),
                        message.bufferFactory().wrap(tensor.raw().asReadOnlyByteBuffer())));
        return ServerResponse.status(HttpStatus.OK).contentType(MediaType.APPLICATION_OCTET_STREAM)
                .header(OipInferBody.HEADER_LENGTH, Integer.toString(json.length))
                .contentLength(json.length + (long) tensor.raw().size())
                .body(inserter);
    }
}
