package io.servegate.loadgen.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.servegate.workload.admin.GatewayAdminClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/gateway} runs the gateway from a copy of its jar: the jar it was started from is
 * rewritten in place (as a rebuild does) while the gateway runs, and the gateway keeps answering
 * calls that load classes it had not loaded before (admin writes, an OIP error, Prometheus text).
 * A gateway run straight from a jar rewritten this way fails those class loads.
 */
@Timeout(240)
class GatewayLauncherTest {

    private static final Path GATEWAY_JAR = Path.of("../gateway/target/gateway-0.1.0-SNAPSHOT.jar");
    private static final Path LAUNCHER = Path.of("../bin/gateway");

    @TempDir
    Path dir;

    @Test
    void aGatewayStartedByTheLauncherKeepsAnsweringWhenItsJarIsRebuilt() throws Exception {
        if (!Files.isRegularFile(GATEWAY_JAR)) {
            fail("no gateway jar at " + GATEWAY_JAR.toAbsolutePath() + ": run `mvn -pl loadgen -am package "
                    + "-Dtest=GatewayLauncherTest -Dsurefire.failIfNoSpecifiedTests=false`");
        }
        Path jar = dir.resolve("gateway.jar");
        Files.copy(GATEWAY_JAR, jar);
        Path copies = dir.resolve("copies");
        int port = GatewayProcess.freeLoopbackPort();
        int adminPort = GatewayProcess.freeLoopbackPort();
        ProcessBuilder launch = new ProcessBuilder(LAUNCHER.toString(), "--server.port=" + port,
                "--server.address=" + GatewayProcess.HOST, "--servegate.admin.port=" + adminPort,
                "--servegate.admin.address=" + GatewayProcess.HOST, "--servegate.oip.grpc-port=0")
                .redirectErrorStream(true).redirectOutput(dir.resolve("gateway.log").toFile());
        launch.environment().putAll(Map.of("SERVEGATE_GATEWAY_JAR", jar.toString(),
                "SERVEGATE_JAR_COPIES", copies.toString(), "JAVA_OPTS", "-Xmx256m"));
        Process gateway = launch.start();
        try {
            GatewayAdminClient admin = new GatewayAdminClient(GatewayProcess.HOST, adminPort, Duration.ofSeconds(30));
            long until = System.nanoTime() + Duration.ofSeconds(150).toNanos();
            while (!admin.ping()) {
                assertThat(gateway.isAlive()).as("the gateway runs: " + log()).isTrue();
                assertThat(System.nanoTime()).as("the gateway answered within 150 s: " + log()).isLessThan(until);
                Thread.sleep(100);
            }
            try (Stream<Path> files = Files.list(copies)) {
                List<Path> running = files.toList();
                assertThat(running).as("one copy").hasSize(1);
                assertThat(Files.mismatch(running.get(0), jar)).as("the copy is the jar's").isEqualTo(-1);
            }

            // a rebuild rewrites the jar in place
            byte[] rebuilt = new byte[(int) Files.size(jar)];
            new Random(1).nextBytes(rebuilt);
            Files.write(jar, rebuilt);

            admin.addApp("launched", "floats", "fallback", 100_000);
            assertThat(admin.post("get_all_applications", Map.of("verbose", false)).toString()).contains("launched");
            HttpClient http = HttpClient.newHttpClient();
            String base = "http://" + GatewayProcess.HOST + ":" + port;
            HttpResponse<String> predicted = http.send(HttpRequest.newBuilder(URI.create(base + "/launched/predict"))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
                            "{\"input\":[1,2]}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(predicted.statusCode()).as(predicted.body()).isEqualTo(200);
            assertThat(predicted.body()).contains("fallback");
            HttpResponse<String> unknown = http.send(HttpRequest.newBuilder(URI.create(base + "/v2/models/nope/infer"))
                    .POST(HttpRequest.BodyPublishers.ofString("{")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(unknown.statusCode()).as(unknown.body()).isBetween(400, 404);
            HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(URI.create(base + "/metrics"))
                    .header("Accept", "text/plain").GET().build(), HttpResponse.BodyHandlers.ofString());
            assertThat(metrics.statusCode()).as(metrics.body()).isEqualTo(200);
            assertThat(gateway.isAlive()).isTrue();
            assertThat(log()).doesNotContain("NoClassDefFoundError", "ClassNotFoundException");
        } finally {
            gateway.destroy();
            if (!gateway.waitFor(20, TimeUnit.SECONDS)) {
                gateway.destroyForcibly();
            }
        }
    }

    private String log() throws java.io.IOException {
        String log = Files.readString(dir.resolve("gateway.log"));
        return log.length() <= 4000 ? log : log.substring(log.length() - 4000);
    }
}
