package io.servegate.gateway.api;

import com.google.protobuf.ByteString;
import io.servegate.core.scheduling.Tenant;
import io.servegate.gateway.dispatch.DeclaredInput;
import io.servegate.gateway.query.DefaultReason;
import io.servegate.gateway.query.PredictionException;
import io.servegate.gateway.query.PredictionService;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Names;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.registry.RegistrySnapshot;
import io.servegate.gateway.rollout.RolloutRoute;
import io.servegate.gateway.rollout.RolloutTraffic;
import io.servegate.gateway.tracing.RequestTrace;
import io.servegate.gateway.warmup.ReadinessGate;
import io.servegate.oip.client.TensorFormatException;
import io.servegate.oip.client.TensorType;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;

/**
 * The Open Inference Protocol's REST binding (KServe v2), for KServe and Triton clients. An
 * infer request's rows go through the model's cache and batching like any query, with no
 * selection and no app: the deadline is {@code servegate.oip.timeout}. Requests and answers may
 * carry their tensors as binary data after a JSON header (Triton's binary tensor data extension).
 * A request that names no version is answered by the version the model's rollout gives it, if
 * any (drawn by its {@code id}, else at random), and counted for the rollout; one that names a
 * version is answered by that version.
 */
public final class OipRestHandler {

    private final Registry registry;
    private final PredictionService predictions;
    private final JsonBodies bodies;
    private final InputParser inputs;
    private final Duration timeout;
    private final int maxBatchInputs;
    private final ReadinessGate readiness;
    private final RolloutTraffic rollouts;

    public OipRestHandler(Registry registry, PredictionService predictions, JsonBodies bodies,
            InputParser inputs, Duration timeout, int maxBatchInputs, ReadinessGate readiness,
            RolloutTraffic rollouts) {
        this.readiness = readiness;
        this.rollouts = rollouts;
        this.registry = registry;
        this.predictions = predictions;
        this.bodies = bodies;
        this.inputs = inputs;
        this.timeout = timeout;
        this.maxBatchInputs = maxBatchInputs;
    }

    /** {@code GET /v2}: the server's name, version and protocol extensions. */
    public Mono<ServerResponse> serverMetadata(ServerRequest request) {
        OipServerMetadata server = OipServerMetadata.GATEWAY;
        return json(HttpStatus.OK, Map.of("name", server.name(), "version", server.version(),
                "extensions", server.extensions()));
    }

    public Mono<ServerResponse> live(ServerRequest request) {
        return json(HttpStatus.OK, Map.of("live", true));
    }

    public Mono<ServerResponse> ready(ServerRequest request) {
        // not ready while warming up or shutting down; liveness stays true all along
        return readiness.ready() ? json(HttpStatus.OK, Map.of("ready", true))
                : json(HttpStatus.SERVICE_UNAVAILABLE, Map.of("ready", false, "reason", readiness.reason()));
    }

    public Mono<ServerResponse> metadata(ServerRequest request) {
        RegistrySnapshot snapshot = registry.snapshot();
        String name = request.pathVariable("model");
        List<String> versions = snapshot.models().stream().filter(m -> m.name().equals(name))
                .map(ModelVersion::version).toList();
        if (versions.isEmpty()) {
            throw ApiException.notFound("unknown model '" + Names.brief(name, 128) + "'");
        }
        ModelVersion m = resolve(snapshot, name, null);
        TensorType<?> type = TensorType.forName(m.inputType());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", name);
        body.put("versions", versions);
        body.put("platform", "servegate");
        DeclaredInput declared = predictions.declaredInput(m.name(), m.version());
        body.put("inputs", List.of(declared.known() // as the containers declare it
                ? Map.of("name", declared.name() != null ? declared.name() : "input", "datatype", declared.datatype(),
                        "shape", declared.shape())
                : Map.of("name", "input", "datatype", type.datatype(),
                        "shape", type.numeric() ? List.of(-1, -1) : List.of(-1))));
        body.put("outputs", List.of(Map.of("name", "output", "datatype", "BYTES", "shape", List.of(-1))));
        return json(HttpStatus.OK, body);
    }

    /** 200 when ready, 400 when not: the protocol's boolean-by-status convention. */
    public Mono<ServerResponse> modelReady(ServerRequest request) {
        String name = request.pathVariable("model");
        ModelVersion m = resolve(registry.snapshot(), name, null);
        boolean ready = predictions.ready(m.name(), m.version());
        if (ready) {
            return json(HttpStatus.OK, Map.of("name", name, "ready", true));
        }
        // every 4xx carries the protocol's {error}, this one too
        return json(HttpStatus.BAD_REQUEST, Map.of("name", name, "ready", false,
                "error", "model '" + Names.brief(name, 128) + "' has no ready replica"));
    }

    /**
     * Infers the rows of the request's one input tensor. The body is JSON, or with the binary
     * tensor data extension a JSON header followed by the raw tensor; the answer's output is
     * binary when the request asks for it ({@code outputs[].parameters.binary_data} or the
     * request parameter {@code binary_data_output}).
     */
    public Mono<ServerResponse> infer(ServerRequest request) {
        String name = request.pathVariable("model");
        String requestedVersion = request.pathVariables().get("version");
        return bodies.bytes(request).flatMap(bytes -> {
            OipInferBody body = OipInferBody.parse(bodies, request.headers().asHttpHeaders(), bytes);
            JsonNode json = body.json();
            ModelVersion m = resolve(registry.snapshot(), name, requestedVersion);
            TensorType<?> type = TensorType.forName(m.inputType());
            boolean binaryOutput = OipBinaryOutput.requested(json);
            JsonNode requestId = json.get("id");
            // a version named is never rerouted; otherwise the model's rollout, if any, chooses one for the whole request
            RolloutRoute route = requestedVersion != null ? null : rollouts.route(m.name(), m.version(),
                    requestId != null && requestId.isString() ? "id:" + requestId.stringValue() : null);
            String version = route == null ? m.version() : route.version();
            List<?> rows = rows(type, body, predictions.declaredInput(m.name(), version));
            Tenant tenant = (Tenant) request.attribute(QueryAccessFilter.TENANT).orElse(Tenant.DEFAULT);
            Function<Object, Mono<String>> inferOne = route == null
                    ? row -> predictions.infer(m.name(), version, type, row, timeout, tenant)
                    : row -> rollouts.infer(route, timeout,
                            (v, t) -> predictions.infer(m.name(), v, type, row, t, tenant));
            return Flux.fromIterable(rows)
                    .flatMapSequential(predictions.tracing().on() ? RequestTrace.traced(inferOne) : inferOne)
                    .collectList()
                    .flatMap(outputs -> {
                        Map<String, Object> out = new LinkedHashMap<>();
                        out.put("model_name", m.name());
                        out.put("model_version", version);
                        if (requestId != null && requestId.isString()) {
                            out.put("id", requestId.stringValue());
                        }
                        if (binaryOutput) {
                            return OipBinaryOutput.respond(bodies, out, outputs);
                        }
                        out.put("outputs", List.of(Map.of("name", "output", "datatype", "BYTES",
                                "shape", List.of(outputs.size()), "data", outputs)));
                        return json(HttpStatus.OK, out);
                    })
                    .onErrorMap(PredictionException.class, e -> new ApiException(
                            e.reason() == DefaultReason.DEADLINE || e.reason() == DefaultReason.INFEASIBLE
                                    ? HttpStatus.GATEWAY_TIMEOUT
                                    : e.reason() == DefaultReason.INPUT_REJECTED ? HttpStatus.BAD_REQUEST
                                    : HttpStatus.SERVICE_UNAVAILABLE, "inference failed", e.getMessage()));
        });
    }

    /** Splits the single input tensor into one value per row. */
    private List<?> rows(TensorType<?> type, OipInferBody body, DeclaredInput declared) {
        int expectedLength = declared.rowLength();
        JsonNode tensors = body.json().get("inputs");
        if (tensors == null || !tensors.isArray() || tensors.size() != 1) {
            throw ApiException.badRequest("'inputs' must be an array with exactly one tensor");
        }
        JsonNode t = tensors.get(0);
        String tensorName = JsonBodies.optionalString(t, "name", "input");
        String datatypeName = JsonBodies.requiredString(t, "datatype");
        JsonNode parameters = t.get("parameters");
        if (parameters != null && !parameters.isNull() && !parameters.isObject()) {
            throw ApiException.badRequest("input '" + tensorName + "': 'parameters' must be an object");
        }
        ByteString raw = body.take(tensorName, parameters);
        if (body.binary()) {
            body.requireAllTaken();
        }
        OipDatatype datatype = OipDatatype.named(datatypeName);
        if (datatype == null) {
            throw ApiException.badRequest("unknown datatype '" + Names.brief(datatypeName, 32) + "'; the protocol's are "
                    + OipDatatype.NAMES);
        }
        if (!datatype.feeds(type)) {
            throw ApiException.badRequest("input datatype " + datatype + " does not match the model's input type '"
                    + type.clipperName() + "', which takes " + OipDatatype.takenBy(type));
        }
        long[] shape = shape(t.get("shape"), datatype != OipDatatype.BYTES);
        String shapeProblem = declared.known()
                ? declared.shapeProblem(datatypeName, Arrays.stream(shape).boxed().toList()) : null;
        if (shapeProblem != null) {
            throw ApiException.badRequest(shapeProblem);
        }
        int n = (int) shape[0];
        int width = width(shape);
        if (n > maxBatchInputs) {
            throw ApiException.badRequest("the tensor has " + n + " rows; the limit is " + maxBatchInputs);
        }
        if (expectedLength > 0 && type.numeric() && width != expectedLength) {
            throw ApiException.badRequest("shape " + t.get("shape") + " does not match the model's input length "
                    + expectedLength);
        }
        if (datatype == OipDatatype.BYTES && width != 1) {
            throw ApiException.badRequest("BYTES tensors must have shape [N] or [N, 1]");
        }
        // the datatype that carries the model's type decodes as containers decode it; others convert
        boolean ownDatatype = datatype.name().equals(type.datatype())
                || type == TensorType.BYTES && datatype == OipDatatype.UINT8 && raw != null;
        if (raw != null) {
            if (t.has("data")) {
                throw ApiException.badRequest("input '" + tensorName + "' has both 'data' and '"
                        + OipInferBody.BINARY_DATA_SIZE + "'; send its values one way");
            }
            return checked(type, expectedLength, ownDatatype ? binaryRows(type, datatype.name(), shape, width, raw)
                    : OipTensorRows.fromBinary(type, datatype, n, width, raw));
        }
        List<JsonNode> flat = new ArrayList<>();
        JsonNode data = t.get("data");
        if (data == null || !data.isArray()) {
            throw ApiException.badRequest("'data' must be an array");
        }
        flatten(data, flat, 0, shape.length);
        if ((long) n * width != flat.size()) {
            throw ApiException.badRequest("'data' holds " + flat.size() + " elements but shape needs "
                    + (long) n * width);
        }
        if (!ownDatatype) {
            return checked(type, expectedLength, OipTensorRows.fromJson(type, datatype, n, width, flat));
        }
        JsonNodeFactory nodes = JsonNodeFactory.instance;
        List<Object> rows = new ArrayList<>(n);
        for (int r = 0; r < n; r++) {
            if (type.numeric()) {
                rows.add(inputs.parse(type, nodes.arrayNode().addAll(flat.subList(r * width, (r + 1) * width)),
                        "data[" + r + "]"));
            } else {
                JsonNode e = flat.get(r);
                if (!e.isString()) {
                    throw ApiException.badRequest("'data[" + r + "]' must be a string");
                }
                Object row = type == TensorType.BYTES ? e.stringValue().getBytes(StandardCharsets.UTF_8) : e.stringValue();
                inputs.requireValid(type, row, "data[" + r + "]", expectedLength);
                rows.add(row);
            }
        }
        return rows;
    }

    /** The elements of one row: the product of the dimensions after the first (1 for {@code [N]}). */
    private static int width(long[] shape) {
        long width = 1;
        for (int i = 1; i < shape.length; i++) {
            width *= shape[i];
            if (width > Integer.MAX_VALUE) {
                throw ApiException.badRequest("'shape' describes rows of more than " + Integer.MAX_VALUE + " elements");
            }
        }
        return (int) width;
    }

    /** {@code [N]} or {@code [N, d]} of positive integers; any rank but for BYTES tensors. */
    private static long[] shape(JsonNode shapeNode, boolean anyRank) {
        if (shapeNode == null || !shapeNode.isArray() || shapeNode.isEmpty() || shapeNode.size() > 2 && !anyRank) {
            throw ApiException.badRequest(anyRank ? "'shape' must be [N, d1, ...]" : "'shape' must be [N] or [N, 1]");
        }
        long[] shape = new long[shapeNode.size()];
        for (int i = 0; i < shape.length; i++) {
            JsonNode d = shapeNode.get(i);
            if (!d.isIntegralNumber() || !d.canConvertToInt() || d.intValue() <= 0) {
                throw ApiException.badRequest("'shape' must hold positive integers");
            }
            shape[i] = d.longValue();
        }
        return shape;
    }

    /** The rows of a raw tensor of the model's own datatype, decoded as the container side decodes one. */
    private static List<?> binaryRows(TensorType<?> type, String datatype, long[] shape, int width, ByteString raw) {
        List<Long> dims = new ArrayList<>(shape.length);
        if (type.numeric()) {
            dims.addAll(List.of(shape[0], (long) width)); // numeric decoders take [N, d]
        } else {
            for (long d : shape) {
                dims.add(d);
            }
        }
        try {
            return type.decode(datatype, dims, raw);
        } catch (TensorFormatException e) {
            throw ApiException.badRequest("binary data of input: " + e.getMessage());
        }
    }

    /** Each row checked as a JSON row is ({@link RowChecks}). */
    private List<?> checked(TensorType<?> type, int expectedLength, List<?> rows) {
        for (int r = 0; r < rows.size(); r++) {
            inputs.requireValid(type, rows.get(r), "row " + r, expectedLength);
        }
        return rows;
    }

    private static void flatten(JsonNode node, List<JsonNode> out, int depth, int rank) {
        if (depth >= rank) {
            throw ApiException.badRequest("'data' is nested deeper than the tensor's shape");
        }
        for (JsonNode e : node) {
            if (e.isArray()) {
                flatten(e, out, depth + 1, rank);
            } else {
                out.add(e);
            }
        }
    }

    private static ModelVersion resolve(RegistrySnapshot snapshot, String name, String version) {
        String v = version != null ? version : snapshot.currentVersion(name)
                .orElseThrow(() -> ApiException.notFound("unknown model '" + Names.brief(name, 128) + "'"));
        return snapshot.model(name, v).orElseThrow(() -> ApiException.notFound("model '" + Names.brief(name, 128)
                + "' has no version '" + Names.brief(v, 128) + "'"));
    }

    private Mono<ServerResponse> json(HttpStatus status, Object body) {
        return bodies.respond(status, body);
    }
}
