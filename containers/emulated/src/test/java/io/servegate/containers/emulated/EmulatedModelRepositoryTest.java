package io.servegate.containers.emulated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelInferResponse;
import io.servegate.oip.RepositoryIndexResponse;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.ServiceTime;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Many emulated models in one container, over real gRPC: emulated load times and sizes, LRU unloading. */
class EmulatedModelRepositoryTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private static ModelContainer<String, String> start(int models, long size, double loadMs, long budget)
            throws Exception {
        return ModelContainer.builder(TensorType.STRINGS, TensorType.STRINGS,
                        new EmulatedModelRepository<>(EmulatedModelRepository.numbered("emu", models, "1"), size, loadMs,
                                () -> new EmulatedPredictor<String>(0, 0, 10)))
                .memoryBudgetBytes(budget).host("127.0.0.1").port(0).build().start();
    }

    private static ModelInferResponse infer(GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub stub,
            String model) {
        return stub.withDeadlineAfter(30, TimeUnit.SECONDS).modelInfer(ModelInferRequest.newBuilder()
                .setModelName(model)
                .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("BYTES")
                        .addShape(1).addShape(1)
                        .setContents(io.servegate.oip.InferTensorContents.newBuilder()
                                .addBytesContents(com.google.protobuf.ByteString.copyFromUtf8("x"))))
                .build());
    }

    @Test
    void aColdModelWaitsForItsEmulatedLoadAndReportsIt() throws Exception {
        try (ModelContainer<String, String> container = start(3, 100, 80, 1000)) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", container.port()).usePlaintext()
                    .build();
            try {
                var stub = GRPCInferenceServiceGrpc.newBlockingStub(channel);
                ModelInferResponse cold = infer(stub, "emu-1");
                assertThat(cold.getParametersOrThrow(ServiceTime.LOAD_TIME_NS).getInt64Param())
                        .isGreaterThanOrEqualTo(80_000_000L);
                ModelInferResponse warm = infer(stub, "emu-1");
                assertThat(warm.getParametersMap()).doesNotContainKey(ServiceTime.LOAD_TIME_NS);
                assertThatThrownBy(() -> infer(stub, "emu-3")).isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
            } finally {
                channel.shutdownNow();
            }
        }
    }

    @Test
    void hostsTwoHundredModelsWithTheMostRecentlyUsedTwentyLoaded() throws Exception {
        try (ModelContainer<String, String> container = start(200, 1 << 20, 0, 20L << 20);
                ContainerClient client = ContainerClient.connect("127.0.0.1:" + container.port())) {
            for (int i = 0; i < 200; i++) {
                assertThat(client.infer("emu-" + i, "", TensorType.STRINGS, List.of("x"), TensorType.STRINGS, TIMEOUT)
                        .get().modelName()).isEqualTo("emu-" + i);
            }
            List<RepositoryIndexResponse.ModelIndex> ready = client.repositoryIndex(true, TIMEOUT).get().getModelsList();
            assertThat(ready).extracting(RepositoryIndexResponse.ModelIndex::getName).containsExactlyInAnyOrderElementsOf(
                    EmulatedModelRepository.numbered("emu", 200, "1").subList(180, 200).stream()
                            .map(k -> k.name()).toList());
            assertThat(ready).allSatisfy(m -> assertThat(m.getReason()).endsWith("size_bytes=" + (1 << 20)));
            assertThat(client.repositoryIndex(false, TIMEOUT).get().getModelsCount()).isEqualTo(200);

            client.loadModel("emu-0", "", TIMEOUT).get(); // emu-180 was used least recently
            assertThat(client.modelReady("emu-0", "", TIMEOUT).get()).isTrue();
            assertThat(client.modelReady("emu-180", "", TIMEOUT).get()).isFalse();
            assertThat(client.modelReady("emu-181", "", TIMEOUT).get()).isTrue();
        }
    }

    @Test
    void aModelLargerThanTheBudgetIsRefused() throws Exception {
        try (ModelContainer<String, String> container = start(2, 500, 0, 400);
                ContainerClient client = ContainerClient.connect("127.0.0.1:" + container.port())) {
            assertThatThrownBy(() -> client.loadModel("emu-0", "", TIMEOUT).get())
                    .isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                        assertThat(e.getStatus().getDescription()).contains("takes 500 bytes")
                                .contains("budget of 400 bytes");
                    });
        }
    }

    @Test
    void rejectsNonsenseOptionsAsUsageErrors() {
        assertThat(usageError("--models", "-1")).contains("--models must be 0 or more");
        assertThat(usageError("--models", "3", "--model-size-bytes", "0")).contains("--model-size-bytes must be positive");
        assertThat(usageError("--models", "3", "--load-ms", "-5")).contains("--load-ms must be finite");
        assertThat(usageError("--models", "3", "--memory-budget-bytes", "0")).contains("memoryBudgetBytes must be positive");
        assertThat(usageError()).contains("a model name is required");
    }

    private static String usageError(String... args) {
        StringWriter err = new StringWriter();
        int code = new CommandLine(new EmulatedContainer()).setErr(new PrintWriter(err)).execute(args);
        assertThat(code).as("exit code; stderr: %s", err).isEqualTo(CommandLine.ExitCode.USAGE);
        return err.toString();
    }
}
