package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.servegate.gateway.api.OipGrpcServer;
import io.servegate.gateway.api.OipGrpcService;
import io.servegate.gateway.dispatch.ReplicaPool;
import io.servegate.gateway.registry.ContainerReplica;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Registry;
import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.FreePort;
import io.servegate.gateway.warmup.ReadinessGate;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelMetadataResponse;
import io.servegate.oip.ServerMetadataRequest;
import io.servegate.oip.ServerMetadataResponse;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.InferResult;
import io.servegate.oip.client.TensorType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * The gateway's Open Inference Protocol gRPC service, called with the SDK's {@link ContainerClient}
 * (and the generated stub where the client has no method) over a real socket, in front of real
 * emulated containers in their own processes: answers come through the model's cache and
 * batching (the same outputs as OIP REST), deadlines are the call's own or
 * {@code servegate.oip.timeout}, and failures are gRPC statuses naming the problem.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "servegate.admin.port=0", "servegate.oip.timeout=600ms", "servegate.limits.max-batch-inputs=64",
        "servegate.batching.queue-capacity=16"})
class OipGrpcEndToEndTest {

    private static final int GRPC_PORT = FreePort.pick();
    private static final Duration CALL = Duration.ofSeconds(10);

    /** Answers in about a millisecond: label = index of the largest element. */
    private static ContainerProcess fast;
    /** Takes 2 s per batch. */
    private static ContainerProcess slow;
    /** Takes 3 s per batch of one: its queue fills. */
    private static ContainerProcess jam;

    @Autowired
    Registry registry;

    @Autowired
    ReplicaPool pool;

    @Autowired
    ObjectMapper json;

    @LocalServerPort
    int queryPort;

    @DynamicPropertySource
    static void grpcPort(DynamicPropertyRegistry properties) {
        properties.add("servegate.oip.grpc-port", () -> GRPC_PORT);
    }

    @BeforeAll
    static void startContainers() throws Exception {
        fast = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "fast", "--version", "1", "--beta-ms", "1",
                "--alpha-ms", "0");
        slow = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "slow", "--version", "1", "--beta-ms",
                "2000", "--alpha-ms", "0");
        jam = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "jam", "--version", "1", "--beta-ms", "3000",
                "--alpha-ms", "0");
    }

    @AfterAll
    static void stopContainers() throws Exception {
        for (ContainerProcess c : new ContainerProcess[] {fast, slow, jam}) {
            if (c != null) {
                c.close();
            }
        }
    }

    @Test
    void servesTheOpenInferenceProtocolOverGrpcThroughTheModelsCacheAndBatching() throws Exception {
        register("fast", fast, -1);
        registry.addModel(new ModelVersion("ghost", "1", List.of(), "floats", "", "", -1)).block();
        try (ContainerClient client = ContainerClient.connect("127.0.0.1:" + GRPC_PORT)) {
            assertThat(client.serverLive(CALL).get()).isTrue();
            assertThat(client.serverReady(CALL).get()).isTrue();
            assertThat(client.modelReady("fast", "", CALL).get()).isTrue();
            assertThat(client.modelReady("fast", "1", CALL).get()).isTrue();
            assertThat(client.modelReady("ghost", "", CALL).get()).as("registered, no replica").isFalse();
            assertStatus(client.modelReady("nope", "", CALL), Status.Code.NOT_FOUND, "unknown model 'nope'");

            ModelMetadataResponse metadata = client.modelMetadata("fast", "", CALL).get();
            assertThat(metadata.getName()).isEqualTo("fast");
            assertThat(metadata.getVersionsList()).containsExactly("1");
            assertThat(metadata.getPlatform()).isEqualTo("servegate");
            assertThat(metadata.getInputs(0).getDatatype()).isEqualTo("FP32");
            assertThat(metadata.getOutputs(0).getDatatype()).isEqualTo("BYTES");
            assertStatus(client.modelMetadata("fast", "9", CALL), Status.Code.NOT_FOUND,
                    "model 'fast' has no version '9'");

            // one-hot rows: the emulated container's label is the index of the 1
            List<float[]> rows = List.of(oneHot(2, 0.5f), oneHot(7, 0.5f), oneHot(0, 0.5f), oneHot(7, 0.25f));
            InferResult<String> result = client.inferAsText("fast", "", TensorType.FLOATS, rows, CALL).get();
            assertThat(result.outputs()).containsExactly("2", "7", "0", "7");
            assertThat(result.modelName()).isEqualTo("fast");
            assertThat(result.modelVersion()).isEqualTo("1");
            // OIP REST answers the same rows alike: one cache and one set of replicas behind both
            assertThat(restInfer("fast", rows)).containsExactly("2", "7", "0", "7");

            List<CompletableFuture<InferResult<String>>> concurrent = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                concurrent.add(client.inferAsText("fast", "1", TensorType.FLOATS, List.of(oneHot(i % 10, 1 + i)),
                        CALL));
            }
            for (int i = 0; i < 10; i++) {
                assertThat(concurrent.get(i).get().outputs()).containsExactly(Integer.toString(i % 10));
            }

            assertStatus(client.inferAsText("nope", "", TensorType.FLOATS, rows, CALL), Status.Code.NOT_FOUND,
                    "unknown model 'nope'");
            assertStatus(client.inferAsText("fast", "9", TensorType.FLOATS, rows, CALL), Status.Code.NOT_FOUND,
                    "has no version '9'");
            assertStatus(client.inferAsText("fast", "", TensorType.STRINGS, List.of("1, 2"), CALL),
                    Status.Code.INVALID_ARGUMENT, "datatype BYTES does not match the model's input type 'floats'");
            assertStatus(client.inferAsText("fast", "", TensorType.FLOATS, List.of(new float[] {1, Float.NaN}), CALL),
                    Status.Code.INVALID_ARGUMENT, "row 0 element 1 is not a finite number");
            List<float[]> tooMany = new ArrayList<>();
            for (int i = 0; i < 65; i++) {
                tooMany.add(oneHot(i % 10, i));
            }
            assertStatus(client.inferAsText("fast", "", TensorType.FLOATS, tooMany, CALL),
                    Status.Code.INVALID_ARGUMENT, "65 rows; the limit is 64");
        }
    }

    @Test
    void deadlinesAreTheCallsOwnOrTheConfiguredTimeoutAndFullQueuesAreResourceExhausted() throws Exception {
        register("slow", slow, -1);
        register("jam", jam, 1);
        try (ContainerClient client = ContainerClient.connect("127.0.0.1:" + GRPC_PORT)) {
            // a 3 s call deadline outlasts servegate.oip.timeout (600 ms): the 2 s batch is answered
            long start = System.nanoTime();
            assertThat(client.inferAsText("slow", "", TensorType.FLOATS, List.of(oneHot(3, 1)), Duration.ofSeconds(3))
                    .get().outputs()).containsExactly("3");
            assertThat(System.nanoTime() - start).isGreaterThan(TimeUnit.MILLISECONDS.toNanos(1500));
            assertStatus(client.inferAsText("slow", "", TensorType.FLOATS, List.of(oneHot(4, 1)),
                    Duration.ofMillis(200)), Status.Code.DEADLINE_EXCEEDED, "");

            // 40 rows for a replica that holds one for 3 s and queues 16: rejected at once, not at the deadline
            List<float[]> rows = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                rows.add(oneHot(i % 10, 1 + i));
            }
            start = System.nanoTime();
            assertStatus(client.inferAsText("jam", "", TensorType.FLOATS, rows, Duration.ofSeconds(5)),
                    Status.Code.RESOURCE_EXHAUSTED, "the model's queue is full");
            assertThat(System.nanoTime() - start).isLessThan(TimeUnit.MILLISECONDS.toNanos(2000));
        }
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", GRPC_PORT).usePlaintext().build();
        try {
            GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub stub = GRPCInferenceServiceGrpc
                    .newBlockingStub(channel);
            ServerMetadataResponse server = stub.serverMetadata(ServerMetadataRequest.getDefaultInstance());
            assertThat(server.getName()).isEqualTo("servegate");
            assertThat(server.getVersion()).isNotEmpty();
            // no call deadline: the gateway's servegate.oip.timeout ends the wait with its own status
            ModelInferRequest request = ModelInferRequest.newBuilder().setModelName("slow")
                    .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("FP32")
                            .addShape(1).addShape(3).setContents(io.servegate.oip.InferTensorContents.newBuilder()
                                    .addFp32Contents(0).addFp32Contents(0).addFp32Contents(9)))
                    .build();
            long start = System.nanoTime();
            assertThatThrownBy(() -> stub.modelInfer(request)).isInstanceOfSatisfying(StatusRuntimeException.class,
                    e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
                        // the scheduler knows a batch takes 2 s: it says so at once rather than at the 600 ms deadline
                        assertThat(e.getStatus().getDescription()).containsAnyOf("no prediction arrived",
                                "predicted that no batch could answer it");
                    });
            long took = System.nanoTime() - start;
            assertThat(took).isLessThan(TimeUnit.MILLISECONDS.toNanos(1900));
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void portZeroTurnsTheServerOff() {
        OipGrpcService service = new OipGrpcService(registry, null, Duration.ofSeconds(1), 1, 1, ReadinessGate.open(),
                null);
        OipGrpcServer off = new OipGrpcServer(service, "", 0, 1024, Duration.ZERO, b -> b);
        off.start();
        assertThat(off.isRunning()).isFalse();
        assertThatThrownBy(() -> new OipGrpcServer(service, "", 70000, 1024, Duration.ZERO, b -> b))
                .hasMessageContaining("servegate.oip.grpc-port must be in 0..65535");
    }

    private void register(String model, ContainerProcess container, int batchSize) throws InterruptedException {
        registry.addModel(new ModelVersion(model, "1", List.of(), "floats", "", "", batchSize)).block();
        registry.addReplica(new ContainerReplica(model + "-1", model, "1", container.address())).block();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!pool.ready(model, "1")) {
            assertThat(System.nanoTime()).as("replica of %s ready", model).isLessThan(until);
            Thread.sleep(20);
        }
    }

    private List<String> restInfer(String model, List<float[]> rows) {
        String body = WebClient.create("http://127.0.0.1:" + queryPort).post().uri("/v2/models/" + model + "/infer")
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("inputs", List.of(Map.of("name", "input", "datatype", "FP32",
                        "shape", List.of(rows.size(), rows.get(0).length), "data", rows))))
                .retrieve().bodyToMono(String.class).block(CALL);
        List<String> out = new ArrayList<>();
        for (JsonNode v : json.readTree(body).get("outputs").get(0).get("data")) {
            out.add(v.asString());
        }
        return out;
    }

    private static void assertStatus(CompletableFuture<?> call, Status.Code code, String description) {
        assertThatThrownBy(call::get).isInstanceOf(ExecutionException.class).cause()
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).as("%s", e.getStatus()).isEqualTo(code);
                    assertThat(e.getStatus().getDescription()).as("%s", e.getStatus()).contains(description);
                });
    }

    private static float[] oneHot(int index, float value) {
        float[] v = new float[10];
        v[index] = value;
        return v;
    }
}
