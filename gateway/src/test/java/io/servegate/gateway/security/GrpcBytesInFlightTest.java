package io.servegate.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.dispatch.ReplicaPool;
import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.FreePort;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.InferResult;
import io.servegate.oip.client.TensorType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Concurrent large gRPC messages are admitted by the bytes they hold on the OIP gRPC port: twelve
 * 15 MiB ModelInfer calls, each on its own connection, against a 40 MiB budget, while another
 * client sends small queries to a real emulated container. Every small query is predicted, some
 * large calls get {@code RESOURCE_EXHAUSTED} at once, nothing runs out of memory, the bytes in
 * flight go back to zero, and a large call is admitted again after the flood.
 */
@ExtendWith(OutputCaptureExtension.class)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "servegate.admin.port=0", "servegate.limits.max-body-size=16MB",
        "servegate.connections.max-body-bytes-in-flight=40MB"})
class GrpcBytesInFlightTest {

    private static final int GRPC_PORT = FreePort.pick();
    private static final int LARGE = 15 << 20;
    private static final int FLOOD = 12;
    private static final int SMALL_QUERIES = 40;
    private static final Duration CALL = Duration.ofSeconds(20);

    private static ContainerProcess fast;

    @Autowired
    Registry registry;

    @Autowired
    ReplicaPool pool;

    @Autowired
    MeterRegistry meters;

    @DynamicPropertySource
    static void grpcPort(DynamicPropertyRegistry properties) {
        properties.add("servegate.oip.grpc-port", () -> GRPC_PORT);
    }

    @BeforeAll
    static void startContainer() throws Exception {
        fast = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "fast", "--version", "1", "--beta-ms", "1",
                "--alpha-ms", "0");
    }

    @AfterAll
    static void stopContainer() throws Exception {
        if (fast != null) {
            fast.close();
        }
    }

    @Test
    void largeMessagesBeyondTheBudgetAreRefusedAndSmallQueriesStillPredicted(CapturedOutput output) throws Exception {
        registry.addModel(new ModelVersion("fast", "1", List.of(), "floats", "", "", -1)).block();
        registry.addReplica(new ContainerReplica("fast-1", "fast", "1", fast.address())).block();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!pool.ready("fast", "1")) {
            assertThat(System.nanoTime()).as("replica ready").isLessThan(until);
            Thread.sleep(20);
        }
        ModelInferRequest large = large();
        List<ManagedChannel> channels = new ArrayList<>();
        try (ContainerClient small = ContainerClient.connect("127.0.0.1:" + GRPC_PORT)) {
            assertThat(small.inferAsText("fast", "", TensorType.FLOATS, List.of(oneHot(3)), CALL).get().outputs())
                    .as("warm-up").containsExactly("3");

            List<ListenableFuture<?>> flood = new ArrayList<>();
            for (int i = 0; i < FLOOD; i++) {
                ManagedChannel channel = channel();
                channels.add(channel);
                flood.add(GRPCInferenceServiceGrpc.newFutureStub(channel)
                        .withDeadlineAfter(CALL.toMillis(), TimeUnit.MILLISECONDS).modelInfer(large));
            }
            List<CompletableFuture<InferResult<String>>> queries = new ArrayList<>();
            for (int i = 0; i < SMALL_QUERIES; i++) {
                queries.add(small.inferAsText("fast", "", TensorType.FLOATS, List.of(oneHot(i % 10)), CALL));
                Thread.sleep(5);
            }

            for (int i = 0; i < SMALL_QUERIES; i++) {
                assertThat(queries.get(i).get().outputs()).as("small query %d", i)
                        .containsExactly(Integer.toString(i % 10));
            }
            List<Status.Code> codes = new ArrayList<>();
            for (ListenableFuture<?> call : flood) {
                codes.add(code(call));
            }
            // an admitted message is read whole, then refused for its 3.9 M elements (limits.max-input-length);
            // bytes are counted as they arrive, so when the twelve interleave evenly every one of them may
            // meet the budget before any is whole and all are refused: the call after the flood shows admission
            assertThat(codes).as("large calls").contains(Status.Code.RESOURCE_EXHAUSTED)
                    .isSubsetOf(Status.Code.RESOURCE_EXHAUSTED, Status.Code.INVALID_ARGUMENT);
            // refused for the port's budget or, since all come from one address, for the client's share
            assertThat(meters.get("servegate.connections.body.refused").tags("port", "grpc").counter().count()
                    + meters.get("servegate.connections.body.client.refused").tags("port", "grpc").counter().count())
                    .isEqualTo(codes.stream().filter(Status.Code.RESOURCE_EXHAUSTED::equals).count());

            awaitNoBytesInFlight();
            assertThat(code(GRPCInferenceServiceGrpc.newFutureStub(channels.get(0))
                    .withDeadlineAfter(CALL.toMillis(), TimeUnit.MILLISECONDS).modelInfer(large)))
                    .as("a large call after the flood").isEqualTo(Status.Code.INVALID_ARGUMENT);
        } finally {
            for (ManagedChannel channel : channels) {
                channel.shutdownNow();
            }
        }
        awaitNoBytesInFlight();
        assertThat(output.getAll()).doesNotContain("OutOfMemoryError").doesNotContain("Cannot reserve");
    }

    /** One FP32 row of 15 MiB, as raw contents. */
    private static ModelInferRequest large() {
        return ModelInferRequest.newBuilder().setModelName("fast")
                .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("FP32")
                        .addShape(1).addShape(LARGE / 4))
                .addRawInputContents(ByteString.copyFrom(new byte[LARGE])).build();
    }

    private static ManagedChannel channel() {
        return NettyChannelBuilder.forAddress("127.0.0.1", GRPC_PORT).usePlaintext()
                .maxInboundMessageSize(1 << 20).build();
    }

    private static Status.Code code(ListenableFuture<?> call) throws InterruptedException {
        try {
            call.get();
            return Status.Code.OK;
        } catch (ExecutionException e) {
            return Status.fromThrowable(e.getCause()).getCode();
        }
    }

    private void awaitNoBytesInFlight() throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (gauge() != 0 && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertThat(gauge()).as("request bytes in flight on the gRPC port").isZero();
    }

    private double gauge() {
        return meters.get("servegate.connections.body.bytes").tags("port", "grpc").gauge().value();
    }

    private static float[] oneHot(int index) {
        float[] v = new float[10];
        v[index] = 1;
        return v;
    }
}
