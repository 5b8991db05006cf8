package io.servegate.oip.client;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.InferParameter;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelInferResponse;
import io.servegate.oip.ModelMetadataRequest;
import io.servegate.oip.ModelMetadataResponse;
import io.servegate.oip.ModelReadyRequest;
import io.servegate.oip.ModelRepositoryParameter;
import io.servegate.oip.RepositoryIndexRequest;
import io.servegate.oip.RepositoryIndexResponse;
import io.servegate.oip.RepositoryModelLoadRequest;
import io.servegate.oip.RepositoryModelUnloadRequest;
import io.servegate.oip.ServerLiveRequest;
import io.servegate.oip.ServerReadyRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * An asynchronous, typed Open Inference Protocol client for one container address. It talks to
 * any OIP gRPC server: our containers, Triton, MLServer, OpenVINO Model Server.
 *
 * <p>Calls never block the caller: each returns a {@link CompletableFuture} completed on a gRPC
 * thread, which one the client's {@link Completion} says. Failures complete it exceptionally with
 * the gRPC {@code StatusRuntimeException}.
 *
 * <p>A batch of {@code bytes} inputs of one length travels as one UINT8 tensor [N, L] (the
 * inputs back to back, as a model wants an image batch) while the server accepts that form;
 * a server that answers such a call INVALID_ARGUMENT but takes the same batch as BYTES [N] gets
 * BYTES from then on.
 */
public final class ContainerClient implements AutoCloseable {

    private final ManagedChannel channel;
    private final GRPCInferenceServiceGrpc.GRPCInferenceServiceFutureStub stub;
    /** Set once the server refused a UINT8 batch that it then took as BYTES. */
    private volatile boolean uint8Refused;

    private ContainerClient(ManagedChannel channel) {
        this.channel = channel;
        this.stub = GRPCInferenceServiceGrpc.newFutureStub(channel);
    }

    /**
     * A plaintext client for {@code host:port}, accepting responses up to {@code maxMessageBytes},
     * whose futures complete on gRPC's executor ({@link Completion#EXECUTOR}).
     */
    public static ContainerClient connect(String address, int maxMessageBytes) {
        return connect(address, maxMessageBytes, Completion.EXECUTOR);
    }

    /**
     * A plaintext client for {@code host:port}, accepting responses up to {@code maxMessageBytes},
     * whose futures complete where {@code completion} says.
     */
    public static ContainerClient connect(String address, int maxMessageBytes, Completion completion) {
        NettyChannelBuilder channel = NettyChannelBuilder.forTarget(address)
                .usePlaintext()
                .maxInboundMessageSize(maxMessageBytes);
        if (completion == Completion.EVENT_LOOP) {
            channel.directExecutor();
        }
        return new ContainerClient(channel.build());
    }

    /** A plaintext client for {@code host:port} with a 64 MiB response limit. */
    public static ContainerClient connect(String address) {
        return connect(address, Completion.EXECUTOR);
    }

    /** A plaintext client for {@code host:port} with a 64 MiB response limit, completing where {@code completion} says. */
    public static ContainerClient connect(String address, Completion completion) {
        return connect(address, 64 * 1024 * 1024, completion);
    }

    /**
     * Predicts a batch and decodes the outputs as {@code outputType}.
     *
     * @param version the model version, or empty for the server's choice
     * @param timeout the call's deadline
     */
    public <X, Y> CompletableFuture<InferResult<Y>> infer(String model, String version, TensorType<X> inputType,
            List<X> inputs, TensorType<Y> outputType, Duration timeout) {
        return call(model, version, inputType, inputs, timeout, response -> decodeFirstOutput(response, outputType),
                null);
    }

    /**
     * Predicts a batch and renders each output as text, whatever its datatype: BYTES as UTF-8,
     * one number per row as that number, a numeric row as a JSON array. This is what the
     * gateway hands to applications, which receive Clipper's string outputs.
     */
    public <X> CompletableFuture<InferResult<String>> inferAsText(String model, String version,
            TensorType<X> inputType, List<X> inputs, Duration timeout) {
        return inferAsText(model, version, inputType, inputs, timeout, null);
    }

    /**
     * {@link #inferAsText(String, String, TensorType, List, Duration)} with {@code headers} added to
     * the call's metadata (a trace context: {@code traceparent}), or none when null.
     */
    public <X> CompletableFuture<InferResult<String>> inferAsText(String model, String version,
            TensorType<X> inputType, List<X> inputs, Duration timeout, Metadata headers) {
        return call(model, version, inputType, inputs, timeout, ContainerClient::renderFirstOutput, headers);
    }

    private <X, Y> CompletableFuture<InferResult<Y>> call(String model, String version, TensorType<X> inputType,
            List<X> inputs, Duration timeout, Function<ModelInferResponse, List<Y>> decode, Metadata headers) {
        EncodedTensor fixedSize;
        try {
            fixedSize = uint8Refused ? null : inputType.encodeFixedSize(inputs);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (fixedSize == null) {
            return call(model, version, inputType, inputs, timeout, decode, null, headers);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        return call(model, version, inputType, inputs, timeout, decode, fixedSize, headers)
                .exceptionallyCompose(e -> {
                    Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                    if (!(cause instanceof StatusRuntimeException s)
                            || s.getStatus().getCode() != Status.Code.INVALID_ARGUMENT) {
                        return CompletableFuture.failedFuture(e);
                    }
                    Duration left = Duration.ofNanos(deadline - System.nanoTime());
                    return call(model, version, inputType, inputs, left, decode, null, headers).thenApply(result -> {
                        uint8Refused = true;
                        return result;
                    });
                });
    }

    /** One ModelInfer call with {@code tensor}, or with the batch's BYTES or numeric encoding when null. */
    private <X, Y> CompletableFuture<InferResult<Y>> call(String model, String version, TensorType<X> inputType,
            List<X> inputs, Duration timeout, Function<ModelInferResponse, List<Y>> decode, EncodedTensor tensor,
            Metadata headers) {
        ModelInferRequest request;
        try {
            request = request(model, version, tensor != null ? tensor : inputType.encode(inputs));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        GRPCInferenceServiceGrpc.GRPCInferenceServiceFutureStub calling = headers == null ? stub
                : stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
        return toCompletable(calling.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS).modelInfer(request))
                .thenApply(response -> {
                    List<Y> outputs = decode.apply(response);
                    if (outputs.size() != inputs.size()) {
                        throw new TensorFormatException("model '" + model + "' answered " + outputs.size()
                                + " outputs for a batch of " + inputs.size());
                    }
                    List<String> rowErrors = RowErrors.of(response);
                    if (!rowErrors.isEmpty() && rowErrors.size() != inputs.size()) {
                        throw new TensorFormatException("model '" + model + "' answered " + rowErrors.size()
                                + " row errors for a batch of " + inputs.size());
                    }
                    return new InferResult<>(outputs, serviceTime(response), response.getModelName(),
                            response.getModelVersion(), rowErrors);
                });
    }

    public CompletableFuture<Boolean> serverLive(Duration timeout) {
        return toCompletable(stub.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
                .serverLive(ServerLiveRequest.getDefaultInstance())).thenApply(r -> r.getLive());
    }

    public CompletableFuture<Boolean> serverReady(Duration timeout) {
        return toCompletable(stub.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
                .serverReady(ServerReadyRequest.getDefaultInstance())).thenApply(r -> r.getReady());
    }

    public CompletableFuture<Boolean> modelReady(String model, String version, Duration timeout) {
        return toCompletable(stub.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
                .modelReady(ModelReadyRequest.newBuilder().setName(model).setVersion(version).build()))
                .thenApply(r -> r.getReady());
    }

    public CompletableFuture<ModelMetadataResponse> modelMetadata(String model, String version, Duration timeout) {
        return toCompletable(stub.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
                .modelMetadata(ModelMetadataRequest.newBuilder().setName(model).setVersion(version).build()));
    }

    /** The model repository's index (RepositoryIndex): every model, or with {@code readyOnly} the loaded ones. */
    public CompletableFuture<RepositoryIndexResponse> repositoryIndex(boolean readyOnly, Duration timeout) {
        return toCompletable(stub.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
                .repositoryIndex(RepositoryIndexRequest.newBuilder().setReady(readyOnly).build()));
    }

    /**
     * Loads a model (RepositoryModelLoad); completes when it is loaded.
     *
     * @param version the version, passed as the {@code version} parameter; empty for the server's choice
     */
    public CompletableFuture<Void> loadModel(String model, String version, Duration timeout) {
        RepositoryModelLoadRequest.Builder request = RepositoryModelLoadRequest.newBuilder().setModelName(model);
        if (!version.isEmpty()) {
            request.putParameters(RepositoryParameters.VERSION,
                    ModelRepositoryParameter.newBuilder().setStringParam(version).build());
        }
        return toCompletable(stub.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
                .repositoryModelLoad(request.build())).thenApply(r -> null);
    }

    /**
     * Unloads a model (RepositoryModelUnload).
     *
     * @param version the version, passed as the {@code version} parameter; empty for every version
     */
    public CompletableFuture<Void> unloadModel(String model, String version, Duration timeout) {
        RepositoryModelUnloadRequest.Builder request = RepositoryModelUnloadRequest.newBuilder().setModelName(model);
        if (!version.isEmpty()) {
            request.putParameters(RepositoryParameters.VERSION,
                    ModelRepositoryParameter.newBuilder().setStringParam(version).build());
        }
        return toCompletable(stub.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
                .repositoryModelUnload(request.build())).thenApply(r -> null);
    }

    @Override
    public void close() {
        channel.shutdown();
        try {
            if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
                channel.shutdownNow();
            }
        } catch (InterruptedException e) {
            channel.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    private static ModelInferRequest request(String model, String version, EncodedTensor tensor) {
        return ModelInferRequest.newBuilder()
                .setModelName(model)
                .setModelVersion(version == null ? "" : version)
                .addInputs(ModelInferRequest.InferInputTensor.newBuilder()
                        .setName("input")
                        .setDatatype(tensor.datatype())
                        .addAllShape(tensor.shape()))
                .addRawInputContents(tensor.raw())
                .build();
    }

    private static <Y> List<Y> decodeFirstOutput(ModelInferResponse response, TensorType<Y> type) {
        int index = firstOutput(response);
        ModelInferResponse.InferOutputTensor out = response.getOutputs(index);
        return response.getRawOutputContentsCount() > index
                ? type.decode(out.getDatatype(), out.getShapeList(), response.getRawOutputContents(index))
                : type.decode(out.getDatatype(), out.getShapeList(), out.getContents());
    }

    /** The index of the model's first output: the first that is not {@link RowErrors#OUTPUT}. */
    private static int firstOutput(ModelInferResponse response) {
        int rowErrors = RowErrors.index(response);
        int index = rowErrors == 0 ? 1 : 0;
        if (index >= response.getOutputsCount()) {
            throw new TensorFormatException("the response has no output tensor");
        }
        return index;
    }

    private static List<String> renderFirstOutput(ModelInferResponse response) {
        String datatype = response.getOutputs(firstOutput(response)).getDatatype();
        TensorType<?> type = switch (datatype) {
            case "BYTES" -> TensorType.STRINGS;
            case "INT32" -> TensorType.INTS;
            case "FP32" -> TensorType.FLOATS;
            case "FP64" -> TensorType.DOUBLES;
            default -> throw new TensorFormatException("output datatype " + datatype
                    + " is not supported; expected BYTES, INT32, FP32 or FP64");
        };
        return render(response, type);
    }

    private static <Y> List<String> render(ModelInferResponse response, TensorType<Y> type) {
        List<Y> values = decodeFirstOutput(response, type);
        List<String> out = new ArrayList<>(values.size());
        for (Y v : values) {
            out.add(type.render(v));
        }
        return out;
    }

    private static long serviceTime(ModelInferResponse response) {
        InferParameter p = response.getParametersMap().get(ServiceTime.SERVICE_TIME_NS);
        return p == null ? -1 : p.getInt64Param();
    }

    private static <T> CompletableFuture<T> toCompletable(ListenableFuture<T> future) {
        CompletableFuture<T> result = new CompletableFuture<>() {
            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
                future.cancel(mayInterruptIfRunning);
                return super.cancel(mayInterruptIfRunning);
            }
        };
        Futures.addCallback(future, new FutureCallback<T>() {
            @Override
            public void onSuccess(T value) {
                result.complete(value);
            }

            @Override
            public void onFailure(Throwable t) {
                result.completeExceptionally(t);
            }
        }, MoreExecutors.directExecutor());
        return result;
    }
}
