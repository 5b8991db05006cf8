package io.servegate.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.testsupport.FreePort;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.InferTensorContents;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelMetadataRequest;
import io.servegate.oip.ModelReadyRequest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * OIP gRPC errors stay small and requests stay unambiguous: a model name of a megabyte comes back
 * cut short in the status description (not as a megabyte of trailers), and an infer request that
 * carries its tensor both as typed {@code contents} and in {@code raw_input_contents}, which the
 * protocol forbids, is refused. A real gateway and a real gRPC channel over loopback.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0", "servegate.limits.max-body-size=4MB"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OipGrpcErrorsTest {

    private static final int GRPC_PORT = FreePort.pick();

    @Autowired
    Registry registry;

    private ManagedChannel channel;
    private GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub oip;

    @DynamicPropertySource
    static void grpcPort(DynamicPropertyRegistry properties) {
        properties.add("servegate.oip.grpc-port", () -> GRPC_PORT);
    }

    @BeforeAll
    void connect() {
        registry.addModel(new ModelVersion("m", "1", List.of(), "floats", "", "", -1)).block();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", GRPC_PORT).usePlaintext()
                .maxInboundMetadataSize(64 * 1024 * 1024).build();
        oip = GRPCInferenceServiceGrpc.newBlockingStub(channel);
    }

    @AfterAll
    void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void namesInErrorsAreCutShort() {
        String huge = "n".repeat(1024 * 1024);
        List<ThrowingCallable> calls = List.of(
                () -> stub().modelMetadata(ModelMetadataRequest.newBuilder().setName(huge).build()),
                () -> stub().modelReady(ModelReadyRequest.newBuilder().setName(huge).build()),
                () -> stub().modelReady(ModelReadyRequest.newBuilder().setName("m").setVersion(huge).build()),
                () -> stub().modelInfer(ModelInferRequest.newBuilder().setModelName(huge).build()),
                () -> stub().modelInfer(floats(ModelInferRequest.newBuilder().setModelName("m"), 1)
                        .addOutputs(ModelInferRequest.InferRequestedOutputTensor.newBuilder().setName(huge)).build()),
                () -> stub().modelInfer(ModelInferRequest.newBuilder().setModelName("m")
                        .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName(huge).setDatatype("FP64")
                                .addShape(1).addShape(1)).build()));
        for (ThrowingCallable call : calls) {
            assertThatThrownBy(call).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                assertThat(e.getStatus().getCode()).isIn(Status.Code.NOT_FOUND, Status.Code.INVALID_ARGUMENT);
                assertThat(e.getStatus().getDescription()).hasSizeLessThan(600).contains("nnnn…");
            });
        }
    }

    @Test
    void typedAndRawContentsTogetherAreRefused() {
        ModelInferRequest both = floats(ModelInferRequest.newBuilder().setModelName("m"), 2)
                .addRawInputContents(rawFloats(1f, 2f)).build();
        assertThatThrownBy(() -> stub().modelInfer(both)).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).as("%s", e.getStatus()).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(e.getStatus().getDescription()).contains("contents", "raw_input_contents");
        });
        // each alone gets past the request checks (and finds no replica)
        for (ModelInferRequest one : List.of(floats(ModelInferRequest.newBuilder().setModelName("m"), 2).build(),
                ModelInferRequest.newBuilder().setModelName("m").addInputs(ModelInferRequest.InferInputTensor
                        .newBuilder().setName("input").setDatatype("FP32").addShape(1).addShape(2))
                        .addRawInputContents(rawFloats(1f, 2f)).build())) {
            assertThatThrownBy(() -> stub().modelInfer(one)).isInstanceOfSatisfying(StatusRuntimeException.class,
                    e -> assertThat(e.getStatus().getCode()).as("%s", e.getStatus())
                            .isEqualTo(Status.Code.UNAVAILABLE));
        }
    }

    private GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub stub() {
        return oip.withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    /** One FP32 input tensor of one row of {@code width} typed elements. */
    private static ModelInferRequest.Builder floats(ModelInferRequest.Builder request, int width) {
        InferTensorContents.Builder contents = InferTensorContents.newBuilder();
        for (int i = 0; i < width; i++) {
            contents.addFp32Contents(i);
        }
        return request.addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("FP32")
                .addShape(1).addShape(width).setContents(contents));
    }

    private static ByteString rawFloats(float... values) {
        ByteBuffer b = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : values) {
            b.putFloat(v);
        }
        return ByteString.copyFrom(b.array());
    }
}
