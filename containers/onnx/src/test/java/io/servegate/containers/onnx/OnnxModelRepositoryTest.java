package io.servegate.containers.onnx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.servegate.oip.RepositoryIndexResponse;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.FileModelRepository;
import io.servegate.sdk.ModelContainer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ONNX container serving many models from a directory within a memory budget: the four
 * Fashion-MNIST models copied under several names and versions, a corrupt file and one larger
 * than the budget, over real gRPC on real test images.
 */
class OnnxModelRepositoryTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final List<float[]> IMAGES = FashionMnist.testSet().images().subList(0, 32);

    @TempDir
    Path dir;

    private static long size(String model) throws Exception {
        return Files.size(ModelTable.named(model).path());
    }

    private void copy(String model, String target) throws Exception {
        Path to = dir.resolve(target);
        Files.createDirectories(to.getParent());
        Files.copy(ModelTable.named(model).path(), to);
    }

    private static List<String> reference(String model) throws Exception {
        try (OnnxPredictor predictor = new OnnxPredictor(ModelTable.named(model).path())) {
            return predictor.predictBatch(IMAGES);
        }
    }

    private ModelContainer<float[], String> start(FileModelRepository<float[], String> repository, long budget)
            throws Exception {
        return ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS, repository).memoryBudgetBytes(budget)
                .host("127.0.0.1").port(0).build().start();
    }

    private static List<String> labels(ContainerClient client, String model, String version) throws Exception {
        return client.inferAsText(model, version, TensorType.FLOATS, IMAGES, TIMEOUT).get().outputs();
    }

    private static Map<String, RepositoryIndexResponse.ModelIndex> index(ContainerClient client) throws Exception {
        return client.repositoryIndex(false, TIMEOUT).get().getModelsList().stream()
                .collect(Collectors.toMap(m -> m.getName() + ":" + m.getVersion(), m -> m));
    }

    @Test
    void servesCopiesOfTheFourModelsAndUnloadsTheLeastRecentlyUsedOverTheBudget() throws Exception {
        copy("fmnist-cnn", "cnn-a.onnx");
        copy("fmnist-cnn", "cnn-b.onnx");
        copy("fmnist-mlp", "mlp/1/model.onnx");
        copy("fmnist-mlp", "mlp/2/model.onnx");
        copy("fmnist-logreg", "logreg.onnx");
        copy("fmnist-tiny", "tiny.onnx");
        long cnn = size("fmnist-cnn");
        long resident = cnn + size("fmnist-mlp") + size("fmnist-logreg") + size("fmnist-tiny");
        long budget = resident + cnn / 2; // room for all four models, not for a second CNN
        FileModelRepository<float[], String> repository = FileModelRepository.inDirectory(dir, "onnx",
                OnnxContainer.loader(TensorType.FLOATS, Device.CPU, 0, OutputMode.ARGMAX, 1));
        try (ModelContainer<float[], String> container = start(repository, budget);
                ContainerClient client = ContainerClient.connect("127.0.0.1:" + container.port())) {
            assertThat(index(client)).hasSize(6).allSatisfy((k, m) -> assertThat(m.getState()).isEqualTo("UNAVAILABLE"));

            assertThat(labels(client, "cnn-a", "")).isEqualTo(reference("fmnist-cnn"));
            assertThat(labels(client, "mlp", "")).isEqualTo(reference("fmnist-mlp")); // version 2, the highest
            assertThat(labels(client, "logreg", "1")).isEqualTo(reference("fmnist-logreg"));
            assertThat(labels(client, "tiny", "")).isEqualTo(reference("fmnist-tiny"));
            Map<String, RepositoryIndexResponse.ModelIndex> loaded = index(client);
            assertThat(loaded.get("cnn-a:1").getState()).isEqualTo("READY");
            assertThat(loaded.get("cnn-a:1").getReason()).matches("load_time_ns=[1-9][0-9]* size_bytes=" + cnn);
            assertThat(loaded.get("mlp:2").getState()).isEqualTo("READY");
            assertThat(loaded.get("mlp:1").getState()).isEqualTo("UNAVAILABLE");

            assertThat(labels(client, "cnn-b", "")).isEqualTo(reference("fmnist-cnn"));
            Map<String, RepositoryIndexResponse.ModelIndex> after = index(client);
            assertThat(after.get("cnn-a:1").getState()).isEqualTo("UNAVAILABLE");
            assertThat(after.get("cnn-a:1").getReason()).contains("least recently used");
            assertThat(after.entrySet().stream().filter(e -> e.getValue().getState().equals("READY")).map(Map.Entry::getKey))
                    .containsExactlyInAnyOrder("cnn-b:1", "mlp:2", "logreg:1", "tiny:1");

            client.unloadModel("tiny", "", TIMEOUT).get();
            client.loadModel("mlp", "1", TIMEOUT).get();
            assertThat(index(client).get("tiny:1").getState()).isEqualTo("UNAVAILABLE");
            assertThat(index(client).get("mlp:1").getState()).isEqualTo("READY");
            assertThat(labels(client, "mlp", "1")).isEqualTo(reference("fmnist-mlp"));
        }
    }

    @Test
    void corruptMissingAndOversizedModelsGetClearStatusesAndTheOthersKeepServing() throws Exception {
        copy("fmnist-tiny", "tiny.onnx");
        byte[] cnnBytes = Files.readAllBytes(ModelTable.named("fmnist-cnn").path());
        Files.write(dir.resolve("truncated.onnx"), java.util.Arrays.copyOf(cnnBytes, cnnBytes.length / 3));
        byte[] noise = new byte[2_000_000];
        new Random(7).nextBytes(noise);
        Files.write(dir.resolve("huge.onnx"), noise);
        copy("fmnist-logreg", "gone.onnx");
        FileModelRepository<float[], String> repository = FileModelRepository.ofFiles(
                List.of(dir.resolve("tiny.onnx"), dir.resolve("truncated.onnx"), dir.resolve("huge.onnx"),
                        dir.resolve("gone.onnx")),
                OnnxContainer.loader(TensorType.FLOATS, Device.CPU, 0, OutputMode.ARGMAX, 1));
        Files.delete(dir.resolve("gone.onnx"));
        try (ModelContainer<float[], String> container = start(repository, 1_000_000);
                ContainerClient client = ContainerClient.connect("127.0.0.1:" + container.port())) {
            assertThat(labels(client, "tiny", "")).isEqualTo(reference("fmnist-tiny"));

            assertStatus(client.loadModel("truncated", "", TIMEOUT), Status.Code.INVALID_ARGUMENT,
                    "truncated.onnx cannot be loaded");
            assertStatus(client.inferAsText("huge", "", TensorType.FLOATS, IMAGES, TIMEOUT),
                    Status.Code.RESOURCE_EXHAUSTED, "takes 2000000 bytes, more than the container's whole memory "
                            + "budget of 1000000 bytes");
            assertStatus(client.loadModel("gone", "", TIMEOUT), Status.Code.NOT_FOUND, "does not exist");
            assertStatus(client.loadModel("fmnist-cnn", "", TIMEOUT), Status.Code.NOT_FOUND,
                    "unknown model 'fmnist-cnn': this container serves 4 models");
            assertThat(index(client).get("truncated:1").getReason()).startsWith("load failed: ");

            assertThat(labels(client, "tiny", "")).isEqualTo(reference("fmnist-tiny"));
            assertThat(index(client).get("tiny:1").getState()).isEqualTo("READY");
        }
    }

    private static void assertStatus(CompletableFuture<?> call, Status.Code code, String message) {
        assertThatThrownBy(call::get).isInstanceOf(ExecutionException.class).cause()
                .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(code);
                    assertThat(String.valueOf(e.getStatus().getDescription())).contains(message);
                });
    }
}
