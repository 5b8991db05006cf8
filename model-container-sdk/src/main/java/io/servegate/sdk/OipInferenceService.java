package io.servegate.sdk;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.InferParameter;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelInferResponse;
import io.servegate.oip.ModelMetadataRequest;
import io.servegate.oip.ModelMetadataResponse;
import io.servegate.oip.ModelReadyRequest;
import io.servegate.oip.ModelReadyResponse;
import io.servegate.oip.ModelRepositoryParameter;
import io.servegate.oip.RepositoryIndexRequest;
import io.servegate.oip.RepositoryIndexResponse;
import io.servegate.oip.RepositoryModelLoadRequest;
import io.servegate.oip.RepositoryModelLoadResponse;
import io.servegate.oip.RepositoryModelUnloadRequest;
import io.servegate.oip.RepositoryModelUnloadResponse;
import io.servegate.oip.ServerLiveRequest;
import io.servegate.oip.ServerLiveResponse;
import io.servegate.oip.ServerMetadataRequest;
import io.servegate.oip.ServerMetadataResponse;
import io.servegate.oip.ServerReadyRequest;
import io.servegate.oip.ServerReadyResponse;
import io.servegate.oip.client.EncodedTensor;
import io.servegate.oip.client.RepositoryParameters;
import io.servegate.oip.client.RowErrors;
import io.servegate.oip.client.ServiceTime;
import io.servegate.oip.client.TensorFormatException;
import io.servegate.oip.client.TensorType;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The OIP gRPC service of one {@link ModelContainer}: validation, loading on first use, dispatch
 * to the model's predictor, encoding, and the model repository extension.
 */
final class OipInferenceService<X, Y> extends GRPCInferenceServiceGrpc.GRPCInferenceServiceImplBase {

    static final String PLATFORM = "servegate-java";
    static final String OUTPUT_NAME = "output";

    private static final Logger LOG = LoggerFactory.getLogger(OipInferenceService.class);

    private final TensorType<X> inputType;
    private final TensorType<Y> outputType;
    private final ResidentModels<X, Y> models;
    private final Executor predictPool;
    /** Whether a batch the predictor raises on is split to find its failed rows ({@link RowIsolation}). */
    private final boolean isolateRows;
    private volatile boolean ready;
    private final ModelMetadataDeclaration metadata;

    OipInferenceService(TensorType<X> inputType, TensorType<Y> outputType, ResidentModels<X, Y> models,
            Executor predictPool, boolean isolateRows) {
        this.inputType = inputType;
        this.outputType = outputType;
        this.models = models;
        this.predictPool = predictPool;
        this.isolateRows = isolateRows;
        this.metadata = new ModelMetadataDeclaration(inputType, outputType);
    }

    /**
     * Declares the dimensions of one input (after the batch dimension) in ModelMetadata, for a
     * container of one predictor; a {@code bytes} input is then declared as UINT8 of that shape.
     */
    void declareInputDims(List<Long> dims) {
        metadata.declareInputDims(dims);
    }

    /** Adds {@code parameters} to every ModelMetadata answer. */
    void reportInMetadata(Map<String, InferParameter> parameters) {
        metadata.report(parameters);
    }

    void markReady() {
        ready = true;
    }

    void markNotReady() {
        ready = false;
    }

    @Override
    public void serverLive(ServerLiveRequest request, StreamObserver<ServerLiveResponse> out) {
        reply(out, ServerLiveResponse.newBuilder().setLive(true).build());
    }

    @Override
    public void serverReady(ServerReadyRequest request, StreamObserver<ServerReadyResponse> out) {
        reply(out, ServerReadyResponse.newBuilder().setReady(ready).build());
    }

    /** Ready while the server is and the model is loaded (an unloaded model is not ready, as in Triton). */
    @Override
    public void modelReady(ModelReadyRequest request, StreamObserver<ModelReadyResponse> out) {
        try {
            ModelKey key = resolve(request.getName(), request.getVersion());
            reply(out, ModelReadyResponse.newBuilder().setReady(ready && models.isLoaded(key)).build());
        } catch (StatusRuntimeException e) {
            out.onError(e);
        }
    }

    @Override
    public void serverMetadata(ServerMetadataRequest request, StreamObserver<ServerMetadataResponse> out) {
        reply(out, ServerMetadataResponse.newBuilder().setName(PLATFORM).setVersion(sdkVersion())
                .addExtensions(RepositoryParameters.EXTENSION).build());
    }

    /** The input length of a model that is not loaded is not known yet, and reported as -1. */
    @Override
    public void modelMetadata(ModelMetadataRequest request, StreamObserver<ModelMetadataResponse> out) {
        try {
            ModelKey key = resolve(request.getName(), request.getVersion());
            int inputLength = models.inputLengthIfLoaded(key);
            reply(out, metadata.answer(key.name(), key.version(), PLATFORM, OUTPUT_NAME, inputLength));
        } catch (StatusRuntimeException e) {
            out.onError(e);
        }
    }

    @Override
    public void modelInfer(ModelInferRequest request, StreamObserver<ModelInferResponse> out) {
        ModelKey key;
        try {
            key = resolve(request.getModelName(), request.getModelVersion());
        } catch (StatusRuntimeException e) {
            out.onError(e);
            return;
        }
        models.acquire(key).whenComplete((lease, failure) -> {
            if (failure != null) {
                out.onError(statusOf(failure));
                return;
            }
            boolean handedOver = false;
            try {
                List<X> batch = decode(request, lease.key(), lease.model().inputLength());
                predictPool.execute(() -> {
                    try {
                        predict(request, lease, batch, out);
                    } finally {
                        lease.release();
                    }
                });
                handedOver = true;
            } catch (StatusRuntimeException e) {
                out.onError(e);
            } catch (RejectedExecutionException e) {
                out.onError(Status.RESOURCE_EXHAUSTED
                        .withDescription("model " + key + " has too many batches queued; retry later")
                        .asRuntimeException());
            } finally {
                if (!handedOver) {
                    lease.release();
                }
            }
        });
    }

    @Override
    public void repositoryIndex(RepositoryIndexRequest request, StreamObserver<RepositoryIndexResponse> out) {
        List<ResidentModels.IndexEntry> entries;
        try {
            entries = models.index(request.getReady());
        } catch (RuntimeException e) {
            out.onError(statusOf(e));
            return;
        }
        RepositoryIndexResponse.Builder response = RepositoryIndexResponse.newBuilder();
        for (ResidentModels.IndexEntry entry : entries) {
            response.addModels(RepositoryIndexResponse.ModelIndex.newBuilder()
                    .setName(entry.model().name())
                    .setVersion(entry.model().version())
                    .setState(entry.state().name())
                    .setReason(entry.reason()));
        }
        reply(out, response.build());
    }

    /** Loads the named model (the version in the {@code version} parameter, else the highest); a loaded one stays. */
    @Override
    public void repositoryModelLoad(RepositoryModelLoadRequest request,
            StreamObserver<RepositoryModelLoadResponse> out) {
        ModelKey key;
        try {
            key = resolve(requireName(request.getModelName()), versionParameter(request.getParametersMap()));
        } catch (RuntimeException e) {
            out.onError(statusOf(e));
            return;
        }
        models.load(key).whenComplete((done, failure) -> {
            if (failure != null) {
                out.onError(statusOf(failure));
            } else {
                reply(out, RepositoryModelLoadResponse.getDefaultInstance());
            }
        });
    }

    /** Unloads the named model: the version in the {@code version} parameter, else every loaded version. */
    @Override
    public void repositoryModelUnload(RepositoryModelUnloadRequest request,
            StreamObserver<RepositoryModelUnloadResponse> out) {
        List<ModelKey> keys;
        try {
            String name = requireName(request.getModelName());
            String version = versionParameter(request.getParametersMap());
            keys = version.isEmpty() ? models.versionsOf(name) : List.of(resolve(name, version));
            if (keys.isEmpty()) {
                throw resolveFailure(name, version);
            }
            for (ModelKey key : keys) {
                if (models.isPinned(key)) {
                    throw Status.FAILED_PRECONDITION.withDescription("model " + key
                            + " is the one model this container was started with and cannot be unloaded")
                            .asRuntimeException();
                }
            }
        } catch (RuntimeException e) {
            out.onError(statusOf(e));
            return;
        }
        CompletableFuture.allOf(keys.stream().map(models::unload).toArray(CompletableFuture[]::new))
                .whenComplete((done, failure) -> {
                    if (failure != null) {
                        out.onError(statusOf(failure));
                    } else {
                        reply(out, RepositoryModelUnloadResponse.getDefaultInstance());
                    }
                });
    }

    private void predict(ModelInferRequest request, ResidentModels.Lease<X, Y> lease, List<X> batch,
            StreamObserver<ModelInferResponse> out) {
        ModelKey key = lease.key();
        long start = System.nanoTime();
        List<Y> outputs;
        List<String> rowErrors = List.of();
        try {
            if (isolateRows) {
                RowIsolation.Outcome<Y> outcome = RowIsolation.predict(lease.model().predictor(), batch,
                        outputType);
                outputs = outcome.outputs();
                rowErrors = outcome.errors();
            } else {
                outputs = lease.model().predictor().predictBatch(batch);
            }
        } catch (RowIsolation.WrongCountException e) {
            out.onError(Status.INTERNAL.withDescription("predictor of model '" + key.name() + "' " + e.getMessage())
                    .asRuntimeException());
            return;
        } catch (InvalidInputException e) {
            out.onError(Status.INVALID_ARGUMENT.withDescription("model '" + key.name() + "' rejected the batch: "
                    + e.getMessage()).asRuntimeException());
            return;
        } catch (Exception | LinkageError e) {
            LOG.warn("predictor of {} failed on a batch of {}", key, batch.size(), e);
            out.onError(Status.INTERNAL.withDescription("predictor of model '" + key.name() + "' failed: " + e)
                    .asRuntimeException());
            return;
        }
        long serviceNanos = System.nanoTime() - start;
        if (outputs == null || outputs.size() != batch.size()) {
            out.onError(Status.INTERNAL.withDescription("predictor of model '" + key.name() + "' returned "
                    + (outputs == null ? "null" : outputs.size() + " outputs") + " for a batch of " + batch.size()
                    + "; it must return exactly one output per input").asRuntimeException());
            return;
        }
        EncodedTensor encoded;
        try {
            encoded = outputType.encode(outputs);
        } catch (RuntimeException e) {
            out.onError(Status.INTERNAL.withDescription("outputs of model '" + key.name() + "' cannot be encoded as "
                    + outputType.datatype() + ": " + e.getMessage()).asRuntimeException());
            return;
        }
        ModelInferResponse.Builder response = ModelInferResponse.newBuilder()
                .setModelName(key.name())
                .setModelVersion(key.version())
                .setId(request.getId())
                .putParameters(ServiceTime.SERVICE_TIME_NS, int64(serviceNanos))
                .putParameters(ServiceTime.BATCH_SIZE, int64(batch.size()));
        if (lease.loadNanos() > 0) {
            response.putParameters(ServiceTime.LOAD_TIME_NS, int64(lease.loadNanos()));
        }
        response.addOutputs(ModelInferResponse.InferOutputTensor.newBuilder()
                        .setName(OUTPUT_NAME)
                        .setDatatype(encoded.datatype())
                        .addAllShape(encoded.shape()))
                .addRawOutputContents(encoded.raw());
        if (!rowErrors.isEmpty()) {
            RowErrors.appendRaw(response, rowErrors);
        }
        reply(out, response.build());
    }

    private List<X> decode(ModelInferRequest request, ModelKey key, int inputLength) {
        String name = key.name();
        if (request.getInputsCount() != 1) {
            throw invalid("model '" + name + "' takes exactly 1 input tensor, the request has "
                    + request.getInputsCount());
        }
        for (ModelInferRequest.InferRequestedOutputTensor requested : request.getOutputsList()) {
            if (!OUTPUT_NAME.equals(requested.getName())) {
                throw invalid("model '" + name + "' has no output '" + requested.getName() + "'; its only output is '"
                        + OUTPUT_NAME + "'");
            }
        }
        ModelInferRequest.InferInputTensor input = request.getInputs(0);
        int rawCount = request.getRawInputContentsCount();
        if (rawCount > 1) {
            throw invalid("raw_input_contents has " + rawCount + " entries for 1 input tensor");
        }
        List<X> batch;
        try {
            batch = rawCount == 1
                    ? inputType.decode(input.getDatatype(), input.getShapeList(), request.getRawInputContents(0))
                    : inputType.decode(input.getDatatype(), input.getShapeList(), input.getContents());
        } catch (TensorFormatException e) {
            throw invalid("input '" + input.getName() + "' of model '" + name + "': " + e.getMessage());
        }
        if (inputLength > 0 && inputType.numeric() && inputType.length(batch.get(0)) != inputLength) {
            throw invalid("input '" + input.getName() + "' of model '" + name + "' has vectors of length "
                    + inputType.length(batch.get(0)) + "; the model expects " + inputLength);
        }
        if (inputLength > 0 && inputType == TensorType.BYTES) {
            for (X row : batch) {
                if (((byte[]) row).length != inputLength) {
                    throw invalid("input '" + input.getName() + "' of model '" + name + "' has an element of "
                            + ((byte[]) row).length + " bytes; the model expects " + inputLength);
                }
            }
        }
        return batch;
    }

    private ModelKey resolve(String name, String version) {
        try {
            return models.resolve(name, version);
        } catch (ModelLoadException | RuntimeException e) {
            throw statusOf(e);
        }
    }

    private StatusRuntimeException resolveFailure(String name, String version) {
        try {
            models.resolve(name, version);
            return Status.NOT_FOUND.withDescription("model '" + name + "' has no version to unload").asRuntimeException();
        } catch (ModelLoadException e) {
            return statusOf(e);
        }
    }

    private static String requireName(String name) {
        if (name.isBlank()) {
            throw invalid("model_name is required");
        }
        return name;
    }

    private static String versionParameter(Map<String, ModelRepositoryParameter> parameters) {
        ModelRepositoryParameter p = parameters.get(RepositoryParameters.VERSION);
        if (p == null) {
            return "";
        }
        return switch (p.getParameterChoiceCase()) {
            case STRING_PARAM -> p.getStringParam();
            case INT64_PARAM -> Long.toString(p.getInt64Param());
            default -> throw invalid("parameter '" + RepositoryParameters.VERSION
                    + "' must be a string or an int64, got " + p.getParameterChoiceCase());
        };
    }

    /** The status a caller gets for a failed load (or any other failure on the way to the predictor). */
    static StatusRuntimeException statusOf(Throwable failure) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        if (cause instanceof StatusRuntimeException e) {
            return e;
        }
        if (cause instanceof ModelLoadException e) {
            Status status = switch (e.reason()) {
                case NOT_FOUND -> Status.NOT_FOUND;
                case INVALID_MODEL -> Status.INVALID_ARGUMENT;
                case TOO_LARGE -> Status.RESOURCE_EXHAUSTED;
            };
            return status.withDescription(e.getMessage()).asRuntimeException();
        }
        if (cause instanceof IllegalStateException e) {
            return Status.UNAVAILABLE.withDescription(e.getMessage()).asRuntimeException();
        }
        return Status.INTERNAL.withDescription("model repository failed: " + cause).asRuntimeException();
    }

    private static InferParameter int64(long value) {
        return InferParameter.newBuilder().setInt64Param(value).build();
    }

    private static StatusRuntimeException invalid(String message) {
        return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
    }

    private static <T> void reply(StreamObserver<T> out, T response) {
        out.onNext(response);
        out.onCompleted();
    }

    private static String sdkVersion() {
        String v = OipInferenceService.class.getPackage().getImplementationVersion();
        return v == null ? "dev" : v;
    }
}
