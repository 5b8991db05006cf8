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
import io.servegate.oip.ServerLiveRequest;
import io.servegate.oip.ServerLiveResponse;
import io.servegate.oip.ServerMetadataRequest;
import io.servegate.oip.ServerMetadataResponse;
import io.servegate.oip.ServerReadyRequest;
import io.servegate.oip.ServerReadyResponse;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The OIP gRPC service of one {@link ModelContainer}: validation, dispatch to the predictor, encoding. */
final class OipInferenceService<X, Y> extends GRPCInferenceServiceGrpc.GRPCInferenceServiceImplBase {

    static final String PLATFORM = "servegate-java";
    static final String OUTPUT_NAME = "output";

    private static final Logger LOG = LoggerFactory.getLogger(OipInferenceService.class);

    private final String name;
    private final String version;
    private final TensorType<X> inputType;
    private final int inputLength;
    private final TensorType<Y> outputType;
    private final Predictor<X, Y> predictor;
    private final Executor predictPool;
    private volatile boolean ready;

    OipInferenceService(String name, String version, TensorType<X> inputType, int inputLength,
            TensorType<Y> outputType, Predictor<X, Y> predictor, Executor predictPool) {
        this.name = name;
        this.version = version;
        this.inputType = inputType;
        this.inputLength = inputLength;
        this.outputType = outputType;
        this.predictor = predictor;
        this.predictPool = predictPool;
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

    @Override
    public void modelReady(ModelReadyRequest request, StreamObserver<ModelReadyResponse> out) {
        try {
            requireModel(request.getName(), request.getVersion());
            reply(out, ModelReadyResponse.newBuilder().setReady(ready).build());
        } catch (StatusRuntimeException e) {
            out.onError(e);
        }
    }

    @Override
    public void serverMetadata(ServerMetadataRequest request, StreamObserver<ServerMetadataResponse> out) {
        reply(out, ServerMetadataResponse.newBuilder().setName(PLATFORM).setVersion(sdkVersion()).build());
    }

    @Override
    public void modelMetadata(ModelMetadataRequest request, StreamObserver<ModelMetadataResponse> out) {
        try {
            requireModel(request.getName(), request.getVersion());
            reply(out, ModelMetadataResponse.newBuilder()
                    .setName(name)
                    .addVersions(version)
                    .setPlatform(PLATFORM)
                    .addInputs(tensorMetadata("input", inputType, inputLength))
                    .addOutputs(tensorMetadata(OUTPUT_NAME, outputType, -1))
                    .build());
        } catch (StatusRuntimeException e) {
            out.onError(e);
        }
    }

    @Override
    public void modelInfer(ModelInferRequest request, StreamObserver<ModelInferResponse> out) {
        List<X> batch;
        try {
            batch = decode(request);
        } catch (StatusRuntimeException e) {
            out.onError(e);
            return;
        }
        try {
            predictPool.execute(() -> predict(request, batch, out));
        } catch (RejectedExecutionException e) {
            out.onError(Status.RESOURCE_EXHAUSTED
                    .withDescription("model '" + name + "' has too many batches queued; retry later")
                    .asRuntimeException());
        }
    }

    private void predict(ModelInferRequest request, List<X> batch, StreamObserver<ModelInferResponse> out) {
        long start = System.nanoTime();
        List<Y> outputs;
        try {
            outputs = predictor.predictBatch(batch);
        } catch (Exception | LinkageError e) {
            LOG.warn("predictor of '{}' failed on a batch of {}", name, batch.size(), e);
            out.onError(Status.INTERNAL.withDescription("predictor of model '" + name + "' failed: " + e)
                    .asRuntimeException());
            return;
        }
        long serviceNanos = System.nanoTime() - start;
        if (outputs == null || outputs.size() != batch.size()) {
            out.onError(Status.INTERNAL.withDescription("predictor of model '" + name + "' returned "
                    + (outputs == null ? "null" : outputs.size() + " outputs") + " for a batch of " + batch.size()
                    + "; it must return exactly one output per input").asRuntimeException());
            return;
        }
        EncodedTensor encoded;
        try {
            encoded = outputType.encode(outputs);
        } catch (RuntimeException e) {
            out.onError(Status.INTERNAL.withDescription("outputs of model '" + name + "' cannot be encoded as "
                    + outputType.datatype() + ": " + e.getMessage()).asRuntimeException());
            return;
        }
        reply(out, ModelInferResponse.newBuilder()
                .setModelName(name)
                .setModelVersion(version)
                .setId(request.getId())
                .putParameters(ServiceTime.SERVICE_TIME_NS, InferParameter.newBuilder().setInt64Param(serviceNanos).build())
                .putParameters(ServiceTime.BATCH_SIZE, InferParameter.newBuilder().setInt64Param(batch.size()).build())
                .addOutputs(ModelInferResponse.InferOutputTensor.newBuilder()
                        .setName(OUTPUT_NAME)
                        .setDatatype(encoded.datatype())
                        .addAllShape(encoded.shape()))
                .addRawOutputContents(encoded.raw())
                .build());
    }

    private List<X> decode(ModelInferRequest request) {
        requireModel(request.getModelName(), request.getModelVersion());
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
        return batch;
    }

    private void requireModel(String requestedName, String requestedVersion) {
        if (!name.equals(requestedName)) {
            throw Status.NOT_FOUND.withDescription("unknown model '" + requestedName + "': this container serves '"
                    + name + "'").asRuntimeException();
        }
        if (!requestedVersion.isEmpty() && !version.equals(requestedVersion)) {
            throw Status.NOT_FOUND.withDescription("unknown version '" + requestedVersion + "' of model '" + name
                    + "': this container serves version '" + version + "'").asRuntimeException();
        }
    }

    private static ModelMetadataResponse.TensorMetadata tensorMetadata(String tensorName, TensorType<?> type,
            int length) {
        ModelMetadataResponse.TensorMetadata.Builder b = ModelMetadataResponse.TensorMetadata.newBuilder()
                .setName(tensorName).setDatatype(type.datatype()).addShape(-1);
        if (type.numeric()) {
            b.addShape(length > 0 ? length : -1);
        }
        return b.build();
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
