package io.servegate.gateway.api;

import com.google.protobuf.ByteString;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.servegate.core.scheduling.Tenant;
import io.servegate.gateway.dispatch.DeclaredInput;
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
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelInferResponse;
import io.servegate.oip.ModelMetadataRequest;
import io.servegate.oip.ModelMetadataResponse;
import io.servegate.oip.ModelReadyRequest;
import io.servegate.oip.ModelReadyResponse;
import io.servegate.oip.ServerLiveRequest;
import io.servegate.oip.ServerLiveResponse;
import io.servegate.oip.ServerMetadataRequest;
import io.servegate.oip.ServerMetadataResponse;
import io.servegate.oip.ServerReadyRequest;
import io.servegate.oip.ServerReadyResponse;
import io.servegate.oip.client.EncodedTensor;
import io.servegate.oip.client.TensorFormatException;
import io.servegate.oip.client.TensorType;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The Open Inference Protocol's gRPC binding ({@code GRPCInferenceService}) on the gateway, the
 * same service as {@link OipRestHandler}: each row of an infer request's input tensor goes through
 * the model version's cache and batching ({@link PredictionService#infer}), by the call's gRPC
 * deadline or, without one, {@code servegate.oip.timeout}. Answers are one BYTES tensor
 * {@code output} of shape [N], the models' outputs as text. A request that names no version is
 * answered by the version the model's rollout gives it, if any (drawn by its {@code id}, else at
 * random), and counted for the rollout; one that names a version is answered by that version.
 *
 * <p>Failures are gRPC statuses: {@code NOT_FOUND} for an unknown model or version,
 * {@code INVALID_ARGUMENT} for a request that does not fit the model, {@code RESOURCE_EXHAUSTED}
 * when the replicas' queues are full, {@code DEADLINE_EXCEEDED}, {@code UNAVAILABLE} when no
 * replica can take the query and {@code INTERNAL} when a container failed the batch. No call
 * blocks: a handler decodes, submits and returns, and the answer is sent from whichever thread
 * completes it; a cancelled call cancels its wait.
 */
public final class OipGrpcService extends GRPCInferenceServiceGrpc.GRPCInferenceServiceImplBase {

    static final String PLATFORM = "servegate";
    static final String OUTPUT = "output";
    private static final int SHOWN_NAME = 128;
    private static final int MAX_DESCRIPTION = 1024;

    private final Registry registry;
    private final PredictionService predictions;
    private final Duration timeout;
    private final int maxBatchInputs;
    private final int maxInputLength;
    private final ReadinessGate readiness;
    private final RolloutTraffic rollouts;

    /**
     * @param timeout        the deadline of a call that has none of its own
     * @param maxBatchInputs most rows in one request
     * @param maxInputLength most elements (numbers, bytes, characters) in one row
     * @param readiness      what ServerReady answers: not while warming up or shutting down
     * @param rollouts       the version an unversioned request of a rollout's model goes to
     */
    public OipGrpcService(Registry registry, PredictionService predictions, Duration timeout,
            int maxBatchInputs, int maxInputLength, ReadinessGate readiness, RolloutTraffic rollouts) {
        this.readiness = readiness;
        this.rollouts = rollouts;
        this.registry = registry;
        this.predictions = predictions;
        this.timeout = timeout;
        this.maxBatchInputs = maxBatchInputs;
        this.maxInputLength = maxInputLength;
    }

    @Override
    public void serverLive(ServerLiveRequest request, StreamObserver<ServerLiveResponse> out) {
        reply(out, ServerLiveResponse.newBuilder().setLive(true).build());
    }

    @Override
    public void serverReady(ServerReadyRequest request, StreamObserver<ServerReadyResponse> out) {
        reply(out, ServerReadyResponse.newBuilder().setReady(readiness.ready()).build());
    }

    @Override
    public void serverMetadata(ServerMetadataRequest request, StreamObserver<ServerMetadataResponse> out) {
        OipServerMetadata server = OipServerMetadata.GATEWAY;
        reply(out, ServerMetadataResponse.newBuilder().setName(server.name()).setVersion(server.version())
                .addAllExtensions(server.extensions()).build());
    }

    @Override
    public void modelReady(ModelReadyRequest request, StreamObserver<ModelReadyResponse> out) {
        try {
            ModelVersion m = resolve(registry.snapshot(), request.getName(), request.getVersion());
            reply(out, ModelReadyResponse.newBuilder().setReady(predictions.ready(m.name(), m.version())).build());
        } catch (StatusRuntimeException e) {
            out.onError(e);
        }
    }

    @Override
    public void modelMetadata(ModelMetadataRequest request, StreamObserver<ModelMetadataResponse> out) {
        try {
            RegistrySnapshot snapshot = registry.snapshot();
            ModelVersion m = resolve(snapshot, request.getName(), request.getVersion());
            DeclaredInput declared = predictions.declaredInput(m.name(), m.version());
            ModelMetadataResponse.TensorMetadata.Builder input = ModelMetadataResponse.TensorMetadata.newBuilder()
                    .setName("input");
            if (declared.known()) { // as the containers declare it
                input.setName(declared.name() != null ? declared.name() : "input").setDatatype(declared.datatype())
                        .addAllShape(declared.shape());
            } else {
                TensorType<?> type = TensorType.forName(m.inputType());
                input.setDatatype(type.datatype()).addShape(-1);
                if (type.numeric()) {
                    input.addShape(-1);
                }
            }
            ModelMetadataResponse.Builder response = ModelMetadataResponse.newBuilder()
                    .setName(m.name()).setPlatform(PLATFORM).addInputs(input)
                    .addOutputs(ModelMetadataResponse.TensorMetadata.newBuilder().setName(OUTPUT).setDatatype("BYTES")
                            .addShape(-1));
            snapshot.models().stream().filter(v -> v.name().equals(m.name()))
                    .forEach(v -> response.addVersions(v.version()));
            reply(out, response.build());
        } catch (StatusRuntimeException e) {
            out.onError(e);
        }
    }

    @Override
    public void modelInfer(ModelInferRequest request, StreamObserver<ModelInferResponse> out) {
        ModelVersion m;
        RolloutRoute route;
        TensorType<?> type;
        List<?> rows;
        try {
            RegistrySnapshot snapshot = registry.snapshot();
            ModelVersion current = resolve(snapshot, request.getModelName(), request.getModelVersion());
            // a version named is never rerouted; otherwise the model's rollout, if any, chooses one for the whole request
            route = !request.getModelVersion().isEmpty() ? null : rollouts.route(current.name(), current.version(),
                    request.getId().isEmpty() ? null : "id:" + request.getId());
            ModelVersion routed = route == null ? null : snapshot.model(current.name(), route.version()).orElse(null);
            route = routed == null ? null : route;
            m = routed == null ? current : routed;
            type = TensorType.forName(m.inputType());
            rows = rows(request, m, type);
        } catch (StatusRuntimeException e) {
            out.onError(e);
            return;
        }
        Duration left = timeLeft();
        RequestTrace trace = RequestTrace.GRPC.get(); // null unless traced: read before the root context is attached
        Tenant tenant = OipGrpcAccess.TENANT.get();
        ServerCallStreamObserver<ModelInferResponse> call = (ServerCallStreamObserver<ModelInferResponse>) out;
        Disposable.Swap answer = Disposables.swap();
        call.setOnCancelHandler(answer::dispose);
        // Subscribing may send a batch to a container from this thread. That batch is shared with other
        // queries, so it must not run in this call's gRPC Context: it would inherit the call's deadline
        // and be cancelled when this call completes or is cancelled.
        Context previous = Context.ROOT.attach();
        try {
            answer.update(subscribe(m, route, type, rows, left, tenant, request, call, trace));
        } finally {
            Context.ROOT.detach(previous);
        }
    }

    /** Answers with {@code m}, the version {@code route} (or null: none) chose, counted for its rollout, scheduled for {@code tenant}. */
    private Disposable subscribe(ModelVersion m, RolloutRoute route, TensorType<?> type, List<?> rows, Duration left,
            Tenant tenant, ModelInferRequest request, ServerCallStreamObserver<ModelInferResponse> out,
            RequestTrace trace) {
        Function<Object, Mono<String>> inferOne = route == null
                ? row -> predictions.infer(m.name(), m.version(), type, row, left, tenant)
                : row -> rollouts.infer(route, left, (v, t) -> predictions.infer(m.name(), v, type, row, t, tenant));
        return Flux.fromIterable(rows)
                .flatMapSequential(row -> trace == null ? inferOne.apply(row)
                        : trace.predicting(() -> inferOne.apply(row)))
                .collectList()
                .subscribe(outputs -> {
                    EncodedTensor tensor = TensorType.STRINGS.encode(outputs);
                    if (!out.isCancelled()) {
                        reply(out, ModelInferResponse.newBuilder()
                                .setModelName(m.name())
                                .setModelVersion(m.version())
                                .setId(request.getId())
                                .addOutputs(ModelInferResponse.InferOutputTensor.newBuilder()
                                        .setName(OUTPUT).setDatatype(tensor.datatype()).addAllShape(tensor.shape()))
                                .addRawOutputContents(tensor.raw())
                                .build());
                    }
                }, error -> {
                    if (!out.isCancelled()) {
                        out.onError(status(error).asRuntimeException());
                    }
                });
    }

    /** The call's own deadline if it has one, else {@code servegate.oip.timeout}. */
    private Duration timeLeft() {
        Deadline deadline = Context.current().getDeadline();
        return deadline == null ? timeout : Duration.ofNanos(Math.max(0, deadline.timeRemaining(TimeUnit.NANOSECONDS)));
    }

    /** One value per row of the request's single input tensor, checked against the model's type and limits. */
    private List<?> rows(ModelInferRequest request, ModelVersion m, TensorType<?> type) {
        if (request.getInputsCount() != 1) {
            throw invalid("model '" + m.name() + "' takes exactly 1 input tensor, the request has "
                    + request.getInputsCount());
        }
        for (ModelInferRequest.InferRequestedOutputTensor requested : request.getOutputsList()) {
            if (!OUTPUT.equals(requested.getName())) {
                throw invalid("model '" + m.name() + "' has no output '" + brief(requested.getName())
                        + "'; its only output is '"
                        + OUTPUT + "'");
            }
        }
        ModelInferRequest.InferInputTensor input = request.getInputs(0);
        if (request.getRawInputContentsCount() > 1) {
            throw invalid("raw_input_contents has " + request.getRawInputContentsCount() + " entries for 1 input tensor");
        }
        if (request.getRawInputContentsCount() == 1 && input.hasContents()) {
            throw invalid("input '" + brief(input.getName()) + "' has both typed contents and raw_input_contents; "
                    + "the protocol allows one");
        }
        if (!input.getShapeList().isEmpty() && input.getShape(0) > maxBatchInputs) {
            throw invalid("the tensor has " + input.getShape(0) + " rows; the limit is " + maxBatchInputs);
        }
        DeclaredInput declared = predictions.declaredInput(m.name(), m.version());
        String shapeProblem = declared.shapeProblem(input.getDatatype(), input.getShapeList());
        if (shapeProblem != null) {
            throw invalid(shapeProblem);
        }
        List<?> rows;
        try {
            rows = rows(type, input, request.getRawInputContentsCount() == 1 ? request.getRawInputContents(0) : null);
        } catch (TensorFormatException | ApiException e) {
            throw invalid("input '" + brief(input.getName()) + "' of model '" + m.name() + "': " + e.getMessage());
        }
        for (int r = 0; r < rows.size(); r++) {
            checkRow(rows.get(r), r, type, declared.rowLength());
        }
        return rows;
    }

    /**
     * The rows of {@code input} (raw when {@code raw} is given, else its typed contents): the
     * datatype that carries the model's input type decodes as containers decode it; any other the
     * model takes is converted as OIP REST converts it ({@link OipTensorRows}).
     */
    private static List<?> rows(TensorType<?> type, ModelInferRequest.InferInputTensor input, ByteString raw) {
        OipDatatype datatype = OipDatatype.named(input.getDatatype());
        if (datatype == null) {
            throw ApiException.badRequest("unknown datatype '" + brief(input.getDatatype()) + "'; the protocol's are "
                    + OipDatatype.NAMES);
        }
        if (datatype.name().equals(type.datatype())
                || type == TensorType.BYTES && datatype == OipDatatype.UINT8 && raw != null) {
            return raw != null ? type.decode(input.getDatatype(), input.getShapeList(), raw)
                    : type.decode(input.getDatatype(), input.getShapeList(), input.getContents());
        }
        if (!datatype.feeds(type)) {
            throw ApiException.badRequest("datatype " + datatype + " does not match the model's input type '"
                    + type.clipperName() + "', which takes " + OipDatatype.takenBy(type));
        }
        List<Long> shape = input.getShapeList();
        if (shape.isEmpty() || shape.stream().anyMatch(d -> d <= 0)) {
            throw ApiException.badRequest("shape " + shape + " must be [N, d1, ...] of positive sizes");
        }
        long width = 1;
        for (int i = 1; i < shape.size(); i++) {
            width *= shape.get(i);
            if (width * shape.get(0) > Integer.MAX_VALUE) {
                throw ApiException.badRequest("shape " + shape + " describes more than " + Integer.MAX_VALUE
                        + " elements");
            }
        }
        int n = Math.toIntExact(shape.get(0));
        return raw != null ? OipTensorRows.fromBinary(type, datatype, n, (int) width, raw)
                : OipTensorRows.fromContents(type, datatype, n, (int) width, input.getContents());
    }

    /** The limits and checks the REST APIs apply to one input. */
    private void checkRow(Object row, int r, TensorType<?> type, int expectedLength) {
        String problem = RowChecks.problem(row, "row " + r, type, expectedLength, maxInputLength);
        if (problem != null) {
            throw invalid(problem);
        }
    }

    /** The version asked for, or the model's current one when {@code version} is empty. */
    private static ModelVersion resolve(RegistrySnapshot snapshot, String name, String version) {
        String v = !version.isEmpty() ? version : snapshot.currentVersion(name).orElseThrow(() ->
                described(Status.NOT_FOUND, "unknown model '" + brief(name) + "'").asRuntimeException());
        return snapshot.model(name, v).orElseThrow(() -> described(Status.NOT_FOUND,
                "model '" + brief(name) + "' has no version '" + brief(v) + "'").asRuntimeException());
    }

    /** How a query that got no prediction fails, by why. */
    private static Status status(Throwable error) {
        if (!(error instanceof PredictionException e)) {
            return described(Status.INTERNAL, "inference failed: " + error.getMessage());
        }
        Status status = switch (e.reason()) {
            case DEADLINE, INFEASIBLE, NO_ANSWER -> Status.DEADLINE_EXCEEDED;
            case OVERLOADED, SHED -> Status.RESOURCE_EXHAUSTED;
            case NO_REPLICA, CIRCUIT_OPEN, NO_MODEL, FORWARD_FAILED -> Status.UNAVAILABLE;
            case CONTAINER_ERROR -> Status.INTERNAL;
            case INPUT_REJECTED -> Status.INVALID_ARGUMENT;
            case LOW_CONFIDENCE -> Status.FAILED_PRECONDITION;
        };
        return described(status, e.getMessage());
    }

    private static StatusRuntimeException invalid(String message) {
        return described(Status.INVALID_ARGUMENT, message).asRuntimeException();
    }

    /** A client's name as an error shows it: cut short, so that an error never grows with the request. */
    private static String brief(String name) {
        return Names.brief(name, SHOWN_NAME);
    }

    /** A status with its description bounded, whatever it quotes (a container's error, a tensor's datatype). */
    private static Status described(Status status, String description) {
        return status.withDescription(description.length() <= MAX_DESCRIPTION ? description
                : description.substring(0, MAX_DESCRIPTION) + "\u2026");
    }

    private static <T> void reply(StreamObserver<T> out, T response) {
        out.onNext(response);
        out.onCompleted();
    }
}
