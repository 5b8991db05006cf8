package io.servegate.gateway.api;

import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.registry.RegistrySnapshot;
import io.servegate.gateway.query.Prediction;
import io.servegate.gateway.query.PredictionService;
import io.servegate.gateway.rpc.ReplicaPool;
import io.servegate.sdk.TensorType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/** Clipper's query API: {@code POST /{app}/predict} and {@code POST /{app}/update}. */
public final class QueryHandler {

    private final Registry registry;
    private final ReplicaPool pool;
    private final PredictionService predictions;
    private final JsonBodies bodies;
    private final InputParser inputs;
    private final int maxBatchInputs;
    private final LongSupplier clock;
    private final AtomicLong queryIds = new AtomicLong();

    public QueryHandler(Registry registry, ReplicaPool pool, PredictionService predictions, JsonBodies bodies, InputParser inputs,
            int maxBatchInputs, LongSupplier clock) {
        this.registry = registry;
        this.pool = pool;
        this.predictions = predictions;
        this.bodies = bodies;
        this.inputs = inputs;
        this.maxBatchInputs = maxBatchInputs;
        this.clock = clock;
    }

    public Mono<ServerResponse> predict(ServerRequest request) {
        long arrival = clock.getAsLong(); // the SLO clock starts here, before the body is read
        String appName = request.pathVariable("app");
        return bodies.object(request).flatMap(body -> {
            RegistrySnapshot snapshot = registry.snapshot();
            Application app = app(snapshot, appName);
            TensorType<?> type = TensorType.forName(app.inputType());
            String model = app.linkedModels().isEmpty() ? null : app.linkedModels().get(0);
            String version = version(snapshot, model, JsonBodies.optionalString(body, "version", null));
            JsonNode single = body.get("input");
            JsonNode batch = body.get("input_batch");
            if ((single == null) == (batch == null)) {
                throw ApiException.badRequest("send exactly one of 'input' and 'input_batch'");
            }
            int length = model == null || version == null ? -1 : pool.inputLength(model, version);
            if (single != null) {
                Object input = inputs.parse(type, single, "input", length);
                return predictions.predict(app, model, version, type, input, arrival)
                        .map(p -> render(p, queryIds.getAndIncrement()))
                        .flatMap(QueryHandler::ok);
            }
            List<Object> parsed = parseBatch(type, batch, length);
            return Flux.fromIterable(parsed)
                    .flatMapSequential(input -> predictions.predict(app, model, version, type, input, arrival))
                    .map(p -> render(p, queryIds.getAndIncrement()))
                    .collectList()
                    .flatMap(list -> ok(Map.of("batch_predictions", list)));
        });
    }

    /**
     * Feedback: validated here; the default selection policy (Clipper's single linked model)
     * has nothing to learn from it, and says so in the answer.
     */
    public Mono<ServerResponse> update(ServerRequest request) {
        String appName = request.pathVariable("app");
        return bodies.object(request).flatMap(body -> {
            RegistrySnapshot snapshot = registry.snapshot();
            Application app = app(snapshot, appName);
            String model = app.linkedModels().isEmpty() ? null : app.linkedModels().get(0);
            String version = model == null ? null : snapshot.currentVersion(model).orElse(null);
            inputs.parse(TensorType.forName(app.inputType()), body.get("input"), "input",
                    version == null ? -1 : pool.inputLength(model, version));
            JsonNode label = body.get("label");
            if (label == null || !(label.isNumber() || label.isString())) {
                throw ApiException.badRequest("'label' must be a number or a string");
            }
            JsonNode uid = body.get("uid");
            if (uid != null && !(uid.isIntegralNumber() || uid.isString())) {
                throw ApiException.badRequest("'uid' must be an integer or a string");
            }
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("app", app.name());
            answer.put("observed", false);
            answer.put("detail", "the app's selection policy (its single linked model) does not learn from feedback");
            return ok(answer);
        });
    }

    private List<Object> parseBatch(TensorType<?> type, JsonNode batch, int length) {
        if (!batch.isArray() || batch.isEmpty()) {
            throw ApiException.badRequest("'input_batch' must be a non-empty array of inputs");
        }
        if (batch.size() > maxBatchInputs) {
            throw ApiException.badRequest("'input_batch' has " + batch.size() + " inputs; the limit is "
                    + maxBatchInputs);
        }
        List<Object> parsed = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            parsed.add(inputs.parse(type, batch.get(i), "input_batch[" + i + "]", length));
        }
        return parsed;
    }

    static Application app(RegistrySnapshot snapshot, String name) {
        return snapshot.app(name).orElseThrow(() -> ApiException.notFound("unknown application '" + name + "'"));
    }

    private static String version(RegistrySnapshot snapshot, String model, String requested) {
        if (model == null) {
            return null;
        }
        if (requested != null) {
            if (snapshot.model(model, requested).isEmpty()) {
                throw ApiException.notFound("model '" + model + "' has no version '" + requested + "'");
            }
            return requested;
        }
        return snapshot.currentVersion(model).orElse(null);
    }

    private Map<String, Object> render(Prediction p, long queryId) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("query_id", queryId);
        JsonNode nested = bodies.tryParse(p.output());
        out.put("output", nested != null ? nested : p.output());
        out.put("default", p.isDefault());
        if (p.isDefault()) {
            out.put("default_explanation", p.explanation());
        }
        return out;
    }

    private static Mono<ServerResponse> ok(Object body) {
        return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(body);
    }
}
