package io.servegate.gateway.api;

import io.servegate.core.cache.EncodedInput;
import io.servegate.gateway.query.PipelineService;
import io.servegate.gateway.query.Prediction;
import io.servegate.gateway.query.PredictionService;
import io.servegate.gateway.query.SelectionService;
import io.servegate.gateway.query.VersionRouter;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.PipelineGraph;
import io.servegate.gateway.registry.PipelineStage;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.registry.RegistrySnapshot;
import io.servegate.gateway.registry.SelectionConfig;
import io.servegate.gateway.registry.StageInput;
import io.servegate.gateway.rollout.RolloutTraffic;
import io.servegate.oip.client.TensorType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import io.servegate.gateway.tracing.RequestTrace;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;

/** Clipper's query API: {@code POST /{app}/predict} and {@code POST /{app}/update}. */
public final class QueryHandler {

    private final Registry registry;
    private final PredictionService predictions;
    private final SelectionService selection;
    private final PipelineService pipelines;
    private final RolloutTraffic rollouts;
    private final Duration feedbackTimeout;
    private final JsonBodies bodies;
    private final InputParser inputs;
    private final int maxBatchInputs;
    private final LongSupplier clock;
    private final AtomicLong queryIds = new AtomicLong();

    public QueryHandler(Registry registry, PredictionService predictions, SelectionService selection,
            PipelineService pipelines, RolloutTraffic rollouts, Duration feedbackTimeout, JsonBodies bodies,
            InputParser inputs, int maxBatchInputs, LongSupplier clock) {
        this.registry = registry;
        this.predictions = predictions;
        this.selection = selection;
        this.pipelines = pipelines;
        this.rollouts = rollouts;
        this.feedbackTimeout = feedbackTimeout;
        this.bodies = bodies;
        this.inputs = inputs;
        this.maxBatchInputs = maxBatchInputs;
        this.clock = clock;
    }

    /**
     * Predicts the body's input: JSON ({@code input} or {@code input_batch}), or with
     * {@code Content-Type: application/octet-stream} the body's bytes as one input of an app
     * whose input type is {@code bytes}.
     */
    public Mono<ServerResponse> predict(ServerRequest request) {
        long arrival = clock.getAsLong(); // the SLO clock starts here, before the body is read
        String appName = request.pathVariable("app");
        if (QueryContentType.of(request) == QueryContentType.RAW) {
            return bodies.raw(request).flatMap(input -> {
                Query query = query(registry.snapshot(), appName, null, arrival);
                if (query.type() != TensorType.BYTES) {
                    throw new ApiException(HttpStatus.UNSUPPORTED_MEDIA_TYPE, "unsupported media type", "'" + appName
                            + "' takes input type '" + query.type().clipperName() + "'; an application/octet-stream "
                            + "body is one raw input, for apps of input type 'bytes' only: send JSON instead");
                }
                inputs.requireValid(query.type(), input, "the body", query.length());
                return answerOne(query.predictOne(), input);
            });
        }
        return bodies.bytes(request).flatMap(json -> {
            RegistrySnapshot snapshot = registry.snapshot();
            boolean bytesApp = inputType(snapshot, appName) == TensorType.BYTES;
            if (bytesApp) {
                // {"input": "<base64>"} decoded from the body's bytes, without a tree
                OneFieldBody<byte[]> fast = bodies.base64Field(json, "input");
                if (fast != null && !fast.others().has("input_batch")) {
                    Query query = query(snapshot, appName, fast.others(), arrival);
                    inputs.requireValid(query.type(), fast.value(), "'input'", query.length());
                    return answerOne(query.predictOne(), fast.value());
                }
            }
            JsonNode body;
            try {
                body = bodies.parseObject(json);
            } catch (ApiException malformed) {
                throw bytesApp && malformed.getMessage().startsWith(MalformedJson.PREFIX)
                        ? QueryContentType.notJsonForBytesApp(request, malformed) : malformed;
            }
            Query query = query(snapshot, appName, body, arrival);
            return answer(body, query.type(), query.length(), query.predictOne());
        });
    }

    /** The input type of an app or pipeline, or null when there is none of that name. */
    private static TensorType<?> inputType(RegistrySnapshot snapshot, String appName) {
        String name = snapshot.pipeline(appName).map(p -> p.pipeline().inputType())
                .or(() -> snapshot.app(appName).map(Application::inputType)).orElse(null);
        return name == null ? null : TensorType.forName(name);
    }

    /** What a query of an app or pipeline takes and how one input of it is predicted. */
    private record Query(TensorType<?> type, int length, Function<Object, Mono<Prediction>> predictOne) {
    }

    /** The query of {@code appName}; {@code body} (null for a raw body) may pick a version or a context. */
    private Query query(RegistrySnapshot snapshot, String appName, JsonNode body, long arrival) {
        PipelineGraph pipeline = snapshot.pipeline(appName).orElse(null);
        String context = body == null ? null : context(body);
        if (pipeline != null) {
            if (body != null && body.has("version")) {
                throw ApiException.badRequest("'version' applies to apps with a single model; '" + appName
                        + "' is a pipeline, whose stages use their models' current versions (or their rollouts')");
            }
            // each stage's model: its current version, or its rollout's choice for this user
            long sloNanos = TimeUnit.MICROSECONDS.toNanos(pipeline.pipeline().latencySloMicros());
            VersionRouter stages = (m, v, encoded, predictWith, shadowWith) -> rollouts.predictStage(m, v, context,
                    arrival, sloNanos, predictWith, shadowWith);
            return new Query(TensorType.forName(pipeline.pipeline().inputType()), inputLength(pipeline, snapshot),
                    traced(input -> pipelines.predict(pipeline, snapshot, input, arrival, stages)));
        }
        Application app = app(snapshot, appName);
        TensorType<?> type = TensorType.forName(app.inputType());
        boolean single = SelectionConfig.SINGLE.policy().equals(app.selection().policy());
        String model = app.linkedModels().isEmpty() ? null : app.linkedModels().get(0);
        String requested = body == null ? null : JsonBodies.optionalString(body, "version", null);
        if (requested != null && !single) {
            throw ApiException.badRequest("'version' applies to apps with a single model; app '" + app.name()
                    + "' selects among its models with policy '" + app.selection().policy() + "'");
        }
        String version = version(snapshot, model, requested);
        int length = !single ? linkedLength(snapshot, app)
                : model == null || version == null ? -1 : predictions.inputLength(model, version);
        if (single && requested == null) {
            // the model's current version, or its rollout's candidate for this user
            return new Query(type, length, traced(input -> rollouts.predict(app, model, version, context,
                    () -> PredictionService.encode(type, input), arrival,
                    v -> predictions.predict(app, model, v, type, input, arrival),
                    (v, timeout) -> predictions.infer(model, v, type, input, timeout))));
        }
        return new Query(type, length, traced(single
                ? input -> predictions.predict(app, model, version, type, input, arrival)
                // each model the policy calls: its current version, or its rollout's choice for this user
                : input -> selection.predict(app, snapshot, context, type, input, arrival,
                        (m, v, encoded, predictWith, shadowWith) -> rollouts.predict(app, m, v, context,
                                () -> encoded, arrival, predictWith, shadowWith))));
    }

    /** Each prediction under its request's trace, when queries are traced. */
    private Function<Object, Mono<Prediction>> traced(Function<Object, Mono<Prediction>> predictOne) {
        return predictions.tracing().on() ? RequestTrace.traced(predictOne) : predictOne;
    }

    /**
     * The input length every linked model's containers declare (their current versions), -1 when
     * none declares one; when two declare different lengths no input fits both, and the query is
     * refused naming them.
     */
    private int linkedLength(RegistrySnapshot snapshot, Application app) {
        int length = -1;
        String first = null;
        for (String model : app.linkedModels()) {
            String version = snapshot.currentVersion(model).orElse(null);
            int declared = version == null ? -1 : predictions.inputLength(model, version);
            if (declared > 0 && length > 0 && declared != length) {
                throw ApiException.badRequest("app '" + app.name() + "' links models whose containers declare inputs "
                        + "of different lengths: '" + first + "' " + length + ", '" + model + "' " + declared
                        + "; no input fits both");
            }
            if (declared > 0 && length < 0) {
                length = declared;
                first = model;
            }
        }
        return length;
    }

    /** Parses {@code input} or {@code input_batch} and answers each input with {@code predictOne}. */
    private Mono<ServerResponse> answer(JsonNode body, TensorType<?> type, int length,
            Function<Object, Mono<Prediction>> predictOne) {
        JsonNode singleInput = body.get("input");
        JsonNode batch = body.get("input_batch");
        if ((singleInput == null) == (batch == null)) {
            throw ApiException.badRequest("send exactly one of 'input' and 'input_batch'");
        }
        if (singleInput != null) {
            return answerOne(predictOne, inputs.parse(type, singleInput, "input", length));
        }
        return Flux.fromIterable(parseBatch(type, batch, length))
                .flatMapSequential(predictOne)
                .map(p -> new Answer(p, queryIds.getAndIncrement()))
                .collectList()
                .flatMap(list -> bodies.respond(HttpStatus.OK, g -> {
                    g.writeStartObject();
                    g.writeArrayPropertyStart("batch_predictions");
                    for (Answer a : list) {
                        PredictionAnswers.write(g, bodies, a.prediction(), a.queryId());
                    }
                    g.writeEndArray();
                    g.writeEndObject();
                }));
    }

    private record Answer(Prediction prediction, long queryId) {
    }

    /** One input's {@code Prediction}. */
    private Mono<ServerResponse> answerOne(Function<Object, Mono<Prediction>> predictOne, Object input) {
        return predictOne.apply(input).flatMap(p -> {
            long queryId = queryIds.getAndIncrement();
            return bodies.respond(HttpStatus.OK, g -> PredictionAnswers.write(g, bodies, p, queryId));
        });
    }

    /** The input length the first stage given the query's input declares, or -1 when unknown. */
    private int inputLength(PipelineGraph pipeline, RegistrySnapshot snapshot) {
        for (PipelineStage s : pipeline.order()) {
            if (!s.isCombine() && s.input() == StageInput.QUERY) {
                int length = snapshot.currentVersion(s.model()).map(v -> predictions.inputLength(s.model(), v)).orElse(-1);
                if (length > 0) {
                    return length;
                }
            }
        }
        return -1;
    }

    /**
     * Feedback {@code {uid?|context?, input, label}}: with a learning policy (exp3, exp4) it is
     * observed and persisted before the answer; the default policy (the single linked model) has
     * nothing to learn and says so. Either way a label on an answer that a rollout of a linked
     * model routed counts for the version that gave it (after the policy's update is stored). If
     * the selection state store is unreachable the answer is 503 and nothing was acknowledged.
     */
    public Mono<ServerResponse> update(ServerRequest request) {
        String appName = request.pathVariable("app");
        return bodies.bytes(request).flatMap(json -> {
            // the input's numbers straight to an array; any other body is read as a tree, which
            // words what is wrong with it
            NumericFieldBody numeric = bodies.numericField(json, "input");
            JsonNode body = numeric != null ? numeric.others() : bodies.parseObject(json);
            RegistrySnapshot snapshot = registry.snapshot();
            if (snapshot.pipeline(appName).isPresent()) {
                throw ApiException.badRequest("'" + appName + "' is a pipeline; pipelines take no feedback");
            }
            Application app = app(snapshot, appName);
            TensorType<?> type = TensorType.forName(app.inputType());
            String model = app.linkedModels().isEmpty() ? null : app.linkedModels().get(0);
            String version = model == null ? null : snapshot.currentVersion(model).orElse(null);
            int expectedLength = version == null ? -1 : predictions.inputLength(model, version);
            Object input = numeric == null ? null : inputs.fromNumbers(type, numeric, expectedLength);
            if (input == null) {
                JsonNode tree = numeric == null ? body : bodies.parseObject(json);
                input = inputs.parse(type, tree.get("input"), "input", expectedLength);
            }
            JsonNode labelNode = body.get("label");
            if (labelNode == null || !(labelNode.isNumber() || labelNode.isString())) {
                throw ApiException.badRequest("'label' must be a number or a string");
            }
            String label = labelNode.isString() ? labelNode.stringValue() : labelNode.asString();
            String context = context(body);
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("app", app.name());
            EncodedInput encoded = PredictionService.encode(type, input);
            if (SelectionConfig.SINGLE.policy().equals(app.selection().policy())) {
                List<RolloutTraffic.Joined> joined = rollouts.feedback(app, context, encoded, label);
                if (!joined.isEmpty()) {
                    answer.put("observed", true);
                    answer.put("rollout", joined.get(0).rolloutId());
                    answer.put("version", joined.get(0).version());
                    answer.put("loss", joined.get(0).loss());
                    return ok(answer);
                }
                answer.put("observed", false);
                answer.put("detail", "the app's selection policy (its single linked model) does not learn from feedback");
                return ok(answer);
            }
            return selection.observe(app, snapshot, context, type, input, label, feedbackTimeout)
                    // a label the policy cannot use (e.g. not a number for regression) is the client's
                    // error (400); a stored state that cannot be decoded is not
                    .onErrorMap(e -> !(e instanceof ApiException) && !(e instanceof IllegalArgumentException
                            && !(e instanceof io.servegate.core.selection.StateCodecException)),
                            e -> new ApiException(
                            HttpStatus.SERVICE_UNAVAILABLE, "selection state unavailable",
                            "feedback was not recorded: " + e.getMessage()))
                    .flatMap(observations -> {
                        answer.put("observed", true);
                        answer.put("observations", observations);
                        // charged once the policy's update is stored, so a retried 503 is not counted twice
                        List<RolloutTraffic.Joined> joined = rollouts.feedback(app, context, encoded, label);
                        if (!joined.isEmpty()) {
                            answer.put("rollouts", joined.stream().map(j -> Map.of("model", j.model(),
                                    "rollout", j.rolloutId(), "version", j.version(), "loss", j.loss())).toList());
                        }
                        return ok(answer);
                    });
        });
    }

    /**
     * Clipper's {@code uid}, or a {@code context} string, selects per-user state; neither means
     * app-wide. Either is at most the selection layer's limit long, so that no client can grow
     * the state store with long names.
     */
    private String context(JsonNode body) {
        JsonNode uid = body.get("uid");
        JsonNode context = body.get("context");
        if (uid != null && context != null && !uid.isNull() && !context.isNull()) {
            throw ApiException.badRequest("send at most one of 'uid' and 'context'");
        }
        if (uid != null && !uid.isNull()) {
            if (!(uid.isIntegralNumber() || uid.isString())) {
                throw ApiException.badRequest("'uid' must be an integer or a string");
            }
            return "uid:" + bounded("uid", uid.asString());
        }
        if (context != null && !context.isNull()) {
            if (!context.isString() || context.stringValue().isEmpty()) {
                throw ApiException.badRequest("'context' must be a non-empty string");
            }
            return "ctx:" + bounded("context", context.stringValue());
        }
        return null;
    }

    private String bounded(String field, String value) {
        if (!selection.acceptsContext(value)) {
            throw ApiException.badRequest("'" + field + "' is longer than the limit of " + selection.maxContextBytes()
                    + " bytes (UTF-8)");
        }
        return value;
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

    private Mono<ServerResponse> ok(Object body) {
        return bodies.respond(HttpStatus.OK, body);
    }
}
