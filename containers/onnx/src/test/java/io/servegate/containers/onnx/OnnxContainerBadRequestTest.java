package io.servegate.containers.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Malformed requests against a real ONNX container get the right gRPC status, and the container
 * keeps serving valid requests after each one.
 */
class OnnxContainerBadRequestTest {

    private static final String MODEL = "fmnist-logreg";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final int MAX_MESSAGE_BYTES = 64 * 1024;

    private static OnnxPredictor predictor;
    private static ModelContainer<float[], String> container;
    private static ContainerClient client;
    private static List<float[]> images;

    @BeforeAll
    static void start() throws Exception {
        predictor = new OnnxPredictor(ModelTable.named(MODEL).path());
        container = OnnxContainer.builder(predictor, TensorType.FLOATS).name(MODEL).host("127.0.0.1").port(0)
                .maxMessageBytes(MAX_MESSAGE_BYTES).build().start();
        client = ContainerClient.connect("127.0.0.1:" + container.port());
        images = FashionMnist.testSet().images();
    }

    @AfterAll
    static void stop() throws Exception {
        client.close();
        container.close();
        predictor.close();
    }

    /** After every bad request: 8 images (25 KB, under the limit) still get the model's labels. */
    @AfterEach
    void validRequestStillSucceeds() throws Exception {
        List<float[]> batch = images.subList(100, 108);
        assertThat(client.infer(MODEL, "", TensorType.FLOATS, batch, TensorType.STRINGS, TIMEOUT).get().outputs())
                .isEqualTo(predictor.predictBatch(batch));
    }

    @Test
    void unknownModelIsNotFound() {
        assertStatus(() -> client.infer("no-such-model", "", TensorType.FLOATS, images.subList(0, 2),
                TensorType.STRINGS, TIMEOUT).get(), Status.Code.NOT_FOUND, "no-such-model");
    }

    @Test
    void doublesForAFloatModelAreInvalid() {
        List<double[]> doubles = new ArrayList<>();
        for (float[] image : images.subList(0, 2)) {
            double[] d = new double[image.length];
            for (int i = 0; i < d.length; i++) {
                d[i] = image[i];
            }
            doubles.add(d);
        }
        assertStatus(() -> client.infer(MODEL, "", TensorType.DOUBLES, doubles, TensorType.STRINGS, TIMEOUT).get(),
                Status.Code.INVALID_ARGUMENT, "FP64");
    }

    @Test
    void wrongVectorLengthIsInvalid() {
        assertStatus(() -> client.infer(MODEL, "", TensorType.FLOATS, List.of(new float[10], new float[10]),
                TensorType.STRINGS, TIMEOUT).get(), Status.Code.INVALID_ARGUMENT, "784");
    }

    @Test
    void emptyBatchIsInvalid() throws Exception {
        // The typed client refuses to encode an empty batch, so the request is built by hand.
        ModelInferRequest request = ModelInferRequest.newBuilder()
                .setModelName(MODEL)
                .addInputs(ModelInferRequest.InferInputTensor.newBuilder()
                        .setName("input").setDatatype("FP32").addShape(0).addShape(FashionMnist.PIXELS))
                .addRawInputContents(ByteString.EMPTY)
                .build();
        ManagedChannel channel = NettyChannelBuilder.forTarget("127.0.0.1:" + container.port()).usePlaintext().build();
        try {
            assertStatus(() -> GRPCInferenceServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(TIMEOUT.toSeconds(), TimeUnit.SECONDS).modelInfer(request),
                    Status.Code.INVALID_ARGUMENT, "empty batch");
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void oversizedRequestIsResourceExhausted() {
        List<float[]> hundred = images.subList(0, 100); // 100 × 784 × 4 B = 313,600 B > 64 KiB
        assertStatus(() -> client.infer(MODEL, "", TensorType.FLOATS, hundred, TensorType.STRINGS, TIMEOUT).get(),
                Status.Code.RESOURCE_EXHAUSTED, null);
    }

    private static void assertStatus(ThrowingCall call, Status.Code code, String inDescription) {
        assertThatThrownBy(call::run).satisfies(t -> {
            Throwable cause = t instanceof ExecutionException ? t.getCause() : t;
            assertThat(cause).isInstanceOf(StatusRuntimeException.class);
            Status status = ((StatusRuntimeException) cause).getStatus();
            assertThat(status.getCode()).as("status %s", status).isEqualTo(code);
            if (inDescription != null) {
                assertThat(status.getDescription()).contains(inDescription);
            }
        });
    }

    @FunctionalInterface
    private interface ThrowingCall {
        Object run() throws Exception;
    }
}
