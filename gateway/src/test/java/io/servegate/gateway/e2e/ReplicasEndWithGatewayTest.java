package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.GatewayChild;
import io.servegate.gateway.testsupport.HttpLoad;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The replicas a gateway process starts with {@code deploy_model} (two emulated containers, each
 * its own JVM) end when the gateway ends: after SIGTERM, which runs the shutdown, and after
 * SIGKILL, which runs nothing in the gateway (the kernel's parent-death signal ends them).
 */
@EnabledOnOs(OS.LINUX)
class ReplicasEndWithGatewayTest {

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"SIGKILL", "SIGTERM"})
    void replicasExitWhenTheGatewayDoes(String signal) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path argFile = Files.createTempFile("servegate-replica-cp", ".args");
        Files.writeString(argFile, "-cp \"" + System.getProperty("java.class.path").replace("\\", "\\\\") + "\"");
        argFile.toFile().deleteOnExit();
        try (GatewayChild gw = GatewayChild.start("256m", "--servegate.containers.process.allowed-commands[0]=" + java,
                "--servegate.containers.process.require-admin-token=false")) {
            HttpLoad http = new HttpLoad();
            String admin = gw.adminUrl() + "/admin/";
            http.post(admin + "add_app", Map.of("name", "orphans", "input_type", "floats", "default_output", "-1",
                    "latency_slo_micros", 1_000_000, "candidate_model_names", List.of()));
            assertThat(http.post(admin + "deploy_model", Map.of("model_name", "emu", "model_version", "1",
                    "input_type", "floats", "num_replicas", 2, "command",
                    List.of(java, "-Xmx64m", "@" + argFile, ContainerProcess.EMULATED))).status()).isEqualTo(200);
            http.post(admin + "add_model_links", Map.of("app_name", "orphans", "model_names", List.of("emu")));
            http.awaitPrediction(gw.url() + "/orphans/predict");

            List<ProcessHandle> replicas = gw.descendants();
            assertThat(replicas).as("the gateway's replica processes").hasSizeGreaterThanOrEqualTo(2)
                    .allMatch(ProcessHandle::isAlive);
            if (signal.equals("SIGKILL")) {
                gw.kill();
            } else {
                gw.terminate();
            }
            assertThat(gw.awaitExit(Duration.ofSeconds(30))).as("gateway exit status").isNotEqualTo(-1);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (replicas.stream().anyMatch(ProcessHandle::isAlive) && System.nanoTime() < until) {
                Thread.sleep(100);
            }
            List<ProcessHandle> left = replicas.stream().filter(ProcessHandle::isAlive).toList();
            left.forEach(ProcessHandle::destroyForcibly);
            assertThat(left).as("replicas still running 15 s after the gateway's " + signal).isEmpty();
        }
    }
}
