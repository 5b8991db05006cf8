package io.servegate.sdk;

import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.InferResult;
import io.servegate.oip.client.ServiceTime;
import io.servegate.oip.client.TensorType;
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
import io.servegate.oip.ServerMetadataRequest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Containers of many models over real gRPC, with the models in real files: each file holds a
 * "shift" k (the model answers (argmax(x) + k) mod 10) padded to the size the test wants, so
 * that the file size the repository measures decides what fits the budget.
 */
class ModelRepositoryContainerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final int SIZE = 1000;

    @TempDir
    Path dir;

    private final List<AutoCloseable> closeables = new ArrayList<>();
    /** Closes of loaded models, per file name. */
    private final Map<String, Integer> closes = new ConcurrentHashMap<>();
    private final AtomicInteger loads = new AtomicInteger();
    private volatile long loadDelayMs;
    private CountDownLatch blockedPredict = new CountDownLatch(0);
    private ContainerClient client;
    private GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub stub;

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
    }

    /** Parses a model file; anything but a leading integer is a corrupt model. */
    private LoadedModel<float[], String> loadShiftModel(Path file) throws IOException, InterruptedException {
        loads.incrementAndGet();
        Thread.sleep(loadDelayMs);
        String text = Files.readString(file, StandardCharsets.UTF_8).trim();
        int shift = Integer.parseInt(text.split("\\s+")[0]);
        String fileName = file.getParent().getFileName() + "/" + file.getFileName();
        Predictor<float[], String> predictor = batch -> {
            blockedPredict.await(10, TimeUnit.SECONDS);
            List<String> out = new ArrayList<>();
            for (float[] v : batch) {
                out.add(Integer.toString((argmax(v) + shift) % 10));
            }
            return out;
        };
        return new LoadedModel<>(predictor, 10, () -> closes.merge(fileName, 1, Integer::sum));
    }

    private static int argmax(float[] v) {
        int best = 0;
        for (int i = 1; i < v.length; i++) {
            if (v[i] > v[best]) {
                best = i;
            }
        }
        return best;
    }

    private void writeModel(Path file, int shift, int size) throws IOException {
        Files.createDirectories(file.getParent());
        StringBuilder text = new StringBuilder(Integer.toString(shift)).append('\n');
        while (text.length() < size) {
            text.append(' ');
        }
        Files.writeString(file, text, StandardCharsets.US_ASCII);
    }

    private void start(long budget) throws IOException {
        ModelContainer<float[], String> container = ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS,
                        FileModelRepository.inDirectory(dir, "model", this::loadShiftModel))
                .memoryBudgetBytes(budget).concurrency(4).host("127.0.0.1").port(0).build().start();
        closeables.add(container);
        client = ContainerClient.connect("127.0.0.1:" + container.port());
        closeables.add(0, client);
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", container.port()).usePlaintext().build();
        closeables.add(0, channel::shutdownNow);
        stub = GRPCInferenceServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    /** Infers one one-hot vector pointing at class 2 and returns the whole response. */
    private ModelInferResponse infer(String model, String version) {
        ByteBuffer raw = ByteBuffer.allocate(10 * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        raw.putFloat(2 * Float.BYTES, 1f);
        return stub.modelInfer(ModelInferRequest.newBuilder().setModelName(model).setModelVersion(version)
                .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("FP32")
                        .addShape(1).addShape(10))
                .addRawInputContents(com.google.protobuf.ByteString.copyFrom(raw.array()))
                .build());
    }

    private String answer(String model) throws Exception {
        return client.inferAsText(model, "", TensorType.FLOATS, List.of(oneHot(2)), TIMEOUT).get().outputs().get(0);
    }

    private static float[] oneHot(int i) {
        float[] v = new float[10];
        v[i] = 1f;
        return v;
    }

    /** name:version → state, and name:version → reason. */
    private Map<String, String> states() throws Exception {
        return client.repositoryIndex(false, TIMEOUT).get().getModelsList().stream().collect(Collectors.toMap(
                m -> m.getName() + ":" + m.getVersion(), RepositoryIndexResponse.ModelIndex::getState));
    }

    private String reason(String model) throws Exception {
        return client.repositoryIndex(false, TIMEOUT).get().getModelsList().stream()
                .filter(m -> m.getName().equals(model)).findFirst().orElseThrow().getReason();
    }

    @Test
    void loadsOnFirstUseAndReportsLoadTimeAndSize() throws Exception {
        writeModel(dir.resolve("a.model"), 1, SIZE);
        writeModel(dir.resolve("b.model"), 3, SIZE);
        start(10 * SIZE);

        assertThat(states()).containsExactlyInAnyOrderEntriesOf(Map.of("a:1", "UNAVAILABLE", "b:1", "UNAVAILABLE"));
        assertThat(reason("a")).isEqualTo("not loaded");
        assertThat(client.modelReady("a", "1", TIMEOUT).get()).isFalse();

        ModelInferResponse first = infer("a", "");
        assertThat(first.getModelVersion()).isEqualTo("1");
        assertThat(first.getParametersMap()).containsKey(ServiceTime.LOAD_TIME_NS);
        assertThat(first.getParametersOrThrow(ServiceTime.LOAD_TIME_NS).getInt64Param()).isPositive();
        ModelInferResponse second = infer("a", "1");
        assertThat(second.getParametersMap()).doesNotContainKey(ServiceTime.LOAD_TIME_NS)
                .containsKey(ServiceTime.SERVICE_TIME_NS);
        assertThat(answer("a")).isEqualTo("3");
        assertThat(answer("b")).isEqualTo("5");

        assertThat(states()).containsExactlyInAnyOrderEntriesOf(Map.of("a:1", "READY", "b:1", "READY"));
        assertThat(reason("a")).matches("load_time_ns=[1-9][0-9]* size_bytes=" + SIZE);
        assertThat(client.modelReady("a", "1", TIMEOUT).get()).isTrue();
        assertThat(client.repositoryIndex(true, TIMEOUT).get().getModelsCount()).isEqualTo(2);
        assertThat(stub.serverMetadata(ServerMetadataRequest.getDefaultInstance()).getExtensionsList())
                .contains("model_repository");
    }

    @Test
    void concurrentRequestsForAColdModelShareOneLoad() throws Exception {
        writeModel(dir.resolve("a.model"), 1, SIZE);
        start(10 * SIZE);
        loadDelayMs = 300;
        List<CompletableFuture<InferResult<String>>> calls = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            calls.add(client.inferAsText("a", "", TensorType.FLOATS, List.of(oneHot(i)), TIMEOUT));
        }
        for (int i = 0; i < 8; i++) {
            assertThat(calls.get(i).get().outputs()).containsExactly(Integer.toString((i + 1) % 10));
        }
        assertThat(loads).hasValue(1);
    }

    @Test
    void unloadsTheLeastRecentlyUsedModelWhenALoadWouldExceedTheBudget() throws Exception {
        for (String m : List.of("a", "b", "c")) {
            writeModel(dir.resolve(m + ".model"), 0, SIZE);
        }
        start(2 * SIZE + SIZE / 2);

        answer("a");
        answer("b");
        answer("a"); // b is now the least recently used
        answer("c");
        assertThat(states()).containsExactlyInAnyOrderEntriesOf(
                Map.of("a:1", "READY", "b:1", "UNAVAILABLE", "c:1", "READY"));
        assertThat(reason("b")).contains("least recently used").contains("'c'");
        assertClosed("b.model", 1);
        assertThat(closes).containsOnlyKeys(dir.getFileName() + "/b.model");

        answer("b"); // a was used before c: a goes
        assertThat(states()).containsExactlyInAnyOrderEntriesOf(
                Map.of("a:1", "UNAVAILABLE", "b:1", "READY", "c:1", "READY"));
        assertClosed("a.model", 1);
    }

    @Test
    void loadsAndUnloadsOnRequest() throws Exception {
        writeModel(dir.resolve("a.model"), 4, SIZE);
        start(10 * SIZE);

        client.loadModel("a", "", TIMEOUT).get();
        assertThat(states()).containsEntry("a:1", "READY");
        assertThat(client.modelReady("a", "", TIMEOUT).get()).isTrue();
        assertThat(infer("a", "").getParametersMap()).doesNotContainKey(ServiceTime.LOAD_TIME_NS);

        client.unloadModel("a", "", TIMEOUT).get();
        assertThat(states()).containsEntry("a:1", "UNAVAILABLE");
        assertThat(reason("a")).isEqualTo("unloaded on request");
        assertThat(client.modelReady("a", "", TIMEOUT).get()).isFalse();
        assertClosed("a.model", 1);

        assertThat(answer("a")).isEqualTo("6"); // loaded again on use
        client.unloadModel("a", "1", TIMEOUT).get();
        client.unloadModel("a", "1", TIMEOUT).get(); // unloading an unloaded model is not an error
        assertClosed("a.model", 2);
    }

    @Test
    void anUnloadWaitsForTheBatchesInFlightBeforeClosingTheModel() throws Exception {
        writeModel(dir.resolve("a.model"), 0, SIZE);
        start(10 * SIZE);
        client.loadModel("a", "", TIMEOUT).get();
        blockedPredict = new CountDownLatch(1);
        CompletableFuture<InferResult<String>> inFlight =
                client.inferAsText("a", "", TensorType.FLOATS, List.of(oneHot(7)), TIMEOUT);
        Thread.sleep(200); // let the batch reach the predictor

        client.unloadModel("a", "", TIMEOUT).get();
        assertThat(closes).isEmpty();
        blockedPredict.countDown();
        assertThat(inFlight.get().outputs()).containsExactly("7");
        assertClosed("a.model", 1);
    }

    @Test
    void servesVersionsInTritonsLayoutAndTheHighestByDefault() throws Exception {
        writeModel(dir.resolve("m/1/model.model"), 1, SIZE);
        writeModel(dir.resolve("m/2/model.model"), 2, SIZE);
        writeModel(dir.resolve("m/10/model.model"), 0, SIZE);
        start(10 * SIZE);

        ModelInferResponse latest = infer("m", "");
        assertThat(latest.getModelVersion()).isEqualTo("10");
        client.loadModel("m", "2", TIMEOUT).get();
        assertThat(states()).containsExactlyInAnyOrderEntriesOf(
                Map.of("m:1", "UNAVAILABLE", "m:2", "READY", "m:10", "READY"));
        assertThat(client.inferAsText("m", "2", TensorType.FLOATS, List.of(oneHot(2)), TIMEOUT).get().outputs())
                .containsExactly("4");

        client.unloadModel("m", "", TIMEOUT).get(); // every version
        assertThat(states()).containsOnlyKeys("m:1", "m:2", "m:10").doesNotContainValue("READY");
    }

    @Test
    void loadErrorsGetClearStatusesAndTheOtherModelsKeepServing() throws Exception {
        writeModel(dir.resolve("good.model"), 1, SIZE);
        writeModel(dir.resolve("huge.model"), 1, 5 * SIZE);
        Files.writeString(dir.resolve("corrupt.model"), "this is not a model");
        start(2 * SIZE);
        assertThat(answer("good")).isEqualTo("3");

        assertStatus(client.inferAsText("nope", "", TensorType.FLOATS, List.of(oneHot(1)), TIMEOUT),
                Status.Code.NOT_FOUND, "unknown model 'nope': this container serves 3 models (corrupt, good, huge)");
        assertStatus(client.loadModel("nope", "", TIMEOUT), Status.Code.NOT_FOUND, "unknown model 'nope'");
        assertStatus(client.loadModel("good", "7", TIMEOUT), Status.Code.NOT_FOUND,
                "unknown version '7' of model 'good': this container serves version '1'");
        assertStatus(client.unloadModel("nope", "", TIMEOUT), Status.Code.NOT_FOUND, "unknown model 'nope'");
        assertStatus(client.loadModel("", "", TIMEOUT), Status.Code.INVALID_ARGUMENT, "model_name is required");
        assertStatus(client.loadModel("corrupt", "", TIMEOUT), Status.Code.INVALID_ARGUMENT,
                "corrupt.model cannot be loaded");
        assertStatus(client.inferAsText("corrupt", "", TensorType.FLOATS, List.of(oneHot(1)), TIMEOUT),
                Status.Code.INVALID_ARGUMENT, "cannot be loaded");
        assertStatus(client.loadModel("huge", "", TIMEOUT), Status.Code.RESOURCE_EXHAUSTED,
                "takes 5000 bytes, more than the container's whole memory budget of 2000 bytes");
        assertThat(reason("huge")).startsWith("load failed: ").contains("5000 bytes");
        assertThat(reason("corrupt")).startsWith("load failed: ");

        Files.delete(dir.resolve("good.model")); // gone from the repository; the loaded copy still serves
        assertThat(answer("good")).isEqualTo("3");
        writeModel(dir.resolve("late.model"), 2, SIZE); // found on first use
        assertThat(answer("late")).isEqualTo("4");
        assertThat(states()).containsEntry("good:1", "READY").containsEntry("late:1", "READY");
        client.unloadModel("good", "", TIMEOUT).get();
        assertThat(states()).doesNotContainKey("good:1");
        assertStatus(client.loadModel("good", "", TIMEOUT), Status.Code.NOT_FOUND, "unknown model 'good'");
    }

    @Test
    void aContainerOfOnePredictorAnswersTheRepositoryRpcsWithItsPinnedModel() throws Exception {
        ModelContainer<float[], String> container = ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS,
                (Predictor<float[], String>) batch -> batch.stream().map(v -> "x").toList())
                .name("one").version("4").host("127.0.0.1").port(0).build().start();
        closeables.add(container);
        client = ContainerClient.connect("127.0.0.1:" + container.port());
        closeables.add(0, client);

        RepositoryIndexResponse index = client.repositoryIndex(false, TIMEOUT).get();
        assertThat(index.getModelsList()).singleElement().satisfies(m -> {
            assertThat(m.getName()).isEqualTo("one");
            assertThat(m.getVersion()).isEqualTo("4");
            assertThat(m.getState()).isEqualTo("READY");
        });
        client.loadModel("one", "", TIMEOUT).get();
        assertStatus(client.unloadModel("one", "", TIMEOUT), Status.Code.FAILED_PRECONDITION, "cannot be unloaded");
        assertThat(client.inferAsText("one", "4", TensorType.FLOATS, List.of(oneHot(1)), TIMEOUT).get().outputs())
                .containsExactly("x");
    }

    /**
     * Waits for the model file's closes to reach {@code count}: the thread of a batch releases its
     * model just after the answer leaves, so an unload right after an answer may close it a little later.
     */
    private void assertClosed(String file, int count) throws InterruptedException {
        String key = dir.getFileName() + "/" + file;
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (closes.getOrDefault(key, 0) < count && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(closes).containsEntry(key, count);
    }

    private static void assertStatus(CompletableFuture<?> call, Status.Code code, String message) {
        assertThatThrownBy(call::get).isInstanceOf(ExecutionException.class).cause()
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(code);
                    assertThat(String.valueOf(e.getStatus().getDescription())).contains(message);
                });
    }
}
