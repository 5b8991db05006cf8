package com.example.fashion;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.TensorType;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The SDK's runnable example, run as a project that depends on the SDK runs it: in its own JVM on
 * the SDK's runtime class path only (no test-scoped jars). It must log through the SDK's logging
 * provider (no "No SLF4J providers" warning), serve, and classify held-out Fashion-MNIST images
 * far better than chance; and docs/first-model.md must show its source as it is.
 */
class CentroidContainerTest {

    private static final Path DATA = Path.of("/usr/share/datasets/fashion-mnist");
    private static final Path SOURCE = Path.of("src/test/java/com/example/fashion/CentroidContainer.java");

    @Test
    void runsOnTheRuntimeClassPathLogsAndClassifiesHeldOutImages() throws Exception {
        assumeTrue(Files.isDirectory(DATA), "needs Debian's dataset-fashion-mnist");
        String classPath = String.join(File.pathSeparator, Path.of("target/classes").toAbsolutePath().toString(),
                Path.of("target/test-classes").toAbsolutePath().toString(),
                Files.readString(Path.of("target/runtime-classpath.txt")).strip());
        Path argFile = Files.createTempFile("centroid-cp", ".args");
        Files.writeString(argFile, "-cp \"" + classPath.replace("\\", "\\\\") + "\"");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx512m",
                "@" + argFile, CentroidContainer.class.getName(), "--host", "127.0.0.1", "--port", "0")
                .redirectErrorStream(true).start();
        StringBuilder output = new StringBuilder();
        CompletableFuture<Integer> ready = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    synchronized (output) {
                        output.append(line).append('\n');
                    }
                    if (line.startsWith("READY port=")) {
                        ready.complete(Integer.parseInt(line.substring(11).trim()));
                    }
                }
            } catch (IOException e) {
                // the process ended
            }
            ready.completeExceptionally(new IOException("the example exited before READY"));
        });
        reader.start();
        try {
            int port = ready.get(120, TimeUnit.SECONDS);
            float[][] images = CentroidContainer.images(DATA.resolve("t10k-images-idx3-ubyte.gz"));
            int[] labels = CentroidContainer.labels(DATA.resolve("t10k-labels-idx1-ubyte.gz"));
            int n = 1000;
            List<String> predicted;
            try (ContainerClient client = ContainerClient.connect("127.0.0.1:" + port)) {
                predicted = client.infer("fmnist-centroid", "1", TensorType.FLOATS,
                        Arrays.asList(images).subList(0, n), TensorType.STRINGS, Duration.ofSeconds(30)).get().outputs();
            }
            long correct = 0;
            for (int i = 0; i < n; i++) {
                correct += Integer.parseInt(predicted.get(i)) == labels[i] ? 1 : 0;
            }
            System.out.printf("EXAMPLE nearest centroid: %d of the first %d test images right%n", correct, n);
            assertThat(correct).as("right of %d held-out images (chance: 10 %%)", n).isGreaterThan(n * 6 / 10);
        } finally {
            p.destroy();
            p.waitFor(30, TimeUnit.SECONDS);
            reader.join(5000);
            Files.deleteIfExists(argFile);
        }
        String log;
        synchronized (output) {
            log = output.toString();
        }
        assertThat(log).as("the example's output").doesNotContain("No SLF4J providers")
                .contains("INFO io.servegate.sdk.ModelContainer - 'fmnist-centroid' serving Open Inference Protocol");
    }

    @Test
    void firstModelDocShowsTheExampleAsItIs() throws IOException {
        String doc = Files.readString(Path.of("../docs/first-model.md"));
        assertThat(doc).as("docs/first-model.md shows " + SOURCE + " verbatim")
                .contains("```java\n" + Files.readString(SOURCE) + "```\n");
    }
}
