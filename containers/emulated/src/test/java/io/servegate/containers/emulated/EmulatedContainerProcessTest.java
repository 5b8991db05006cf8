package io.servegate.containers.emulated;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.InferResult;
import io.servegate.oip.client.TensorType;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/**
 * Runs the container as a separate JVM, as an orchestrator would, and stops it with SIGTERM
 * while a batch is in the predictor: the batch must still be answered (drain on SIGTERM).
 */
@EnabledOnOs({OS.LINUX, OS.MAC}) // Process.destroy() is SIGTERM there
class EmulatedContainerProcessTest {

    private static final Pattern READY = Pattern.compile("READY port=(\\d+)");
    /** Generous bounds that only keep a broken build from hanging; nothing here measures time. */
    private static final long STARTUP_LIMIT_S = 120;
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);

    private Process process;

    @AfterEach
    void killLeftovers() {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
        }
    }

    @Test
    void finishesTheInFlightBatchOnSigterm() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        process = new ProcessBuilder(java,
                "-Dorg.slf4j.simpleLogger.log.io.servegate.containers.emulated=debug",
                "-cp", System.getProperty("java.class.path"),
                EmulatedContainer.class.getName(),
                "--name", "emu", "--host", "127.0.0.1", "--port", "0",
                "--beta-ms", "1500", "--alpha-ms", "0", "--drain-seconds", "30")
                .start();
        process.getOutputStream().close();

        // The predictor logs (at debug, on stderr) when a batch starts: that is when we signal.
        CountDownLatch batchStarted = new CountDownLatch(1);
        StringBuilder stderr = new StringBuilder();
        pump(process.getErrorStream(), line -> {
            synchronized (stderr) {
                stderr.append(line).append('\n');
            }
            if (line.contains("predicting a batch of")) {
                batchStarted.countDown();
            }
        });
        CompletableFuture<Integer> port = new CompletableFuture<>();
        pump(process.getInputStream(), line -> {
            Matcher m = READY.matcher(line);
            if (m.find()) {
                port.complete(Integer.parseInt(m.group(1)));
            }
        });
        process.onExit().thenRun(() -> port.completeExceptionally(
                new IllegalStateException("container exited with " + process.exitValue() + " before READY")));

        int p = port.get(STARTUP_LIMIT_S, TimeUnit.SECONDS);
        try (ContainerClient client = ContainerClient.connect("127.0.0.1:" + p)) {
            float[] input = new float[] {0.2f, 0.1f, 0.9f, 0.4f};
            CompletableFuture<InferResult<String>> inFlight = client.infer("emu", "", TensorType.FLOATS,
                    List.of(input, input), TensorType.STRINGS, CALL_TIMEOUT);
            assertThat(batchStarted.await(STARTUP_LIMIT_S, TimeUnit.SECONDS))
                    .as("the batch reached the predictor; stderr:%n%s", stderr).isTrue();
            assertThat(inFlight).as("signal sent while the batch is in flight").isNotDone();

            process.destroy(); // SIGTERM

            InferResult<String> result = inFlight.get(CALL_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertThat(result.outputs()).containsExactly("2", "2");
            assertThat(result.modelName()).isEqualTo("emu");
        }
        assertThat(process.waitFor(STARTUP_LIMIT_S, TimeUnit.SECONDS)).as("process exits after draining").isTrue();
        assertThat(process.exitValue()).as("stderr:%n%s", stderr).isIn(0, 143);
    }

    private static void pump(InputStream in, java.util.function.Consumer<String> onLine) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    onLine.accept(line);
                }
            } catch (IOException e) {
                // the process went away; the assertions report what matters
            }
        }, "pump");
        t.setDaemon(true);
        t.start();
    }
}
