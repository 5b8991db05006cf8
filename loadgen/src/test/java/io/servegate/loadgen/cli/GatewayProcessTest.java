package io.servegate.loadgen.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servegate.loadgen.harness.GatewayProcess;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class GatewayProcessTest {

    @TempDir
    Path dir;

    @Test
    void commandRunsTheJarOnTheGivenLoopbackPortsWithoutTheCacheOrOipGrpc() {
        List<String> cmd = GatewayProcess.command("/jdk/bin/java", List.of("-Xmx1g"), Path.of("gw.jar"), 4001, 4002,
                List.of("--servegate.batching.batch-wait=1ms"));
        assertThat(cmd).containsExactly("/jdk/bin/java", "-Xmx1g", "-jar", "gw.jar", "--server.port=4001",
                "--server.address=127.0.0.1", "--servegate.admin.port=4002", "--servegate.admin.address=127.0.0.1",
                "--servegate.cache.enabled=false", "--servegate.oip.grpc-port=0", "--servegate.batching.batch-wait=1ms");
    }

    @Test
    void extraSettingsComeLastSoThatTheyWin() {
        List<String> cmd = GatewayProcess.command("java", List.of(), Path.of("gw.jar"), 1, 2,
                List.of("--servegate.cache.enabled=true"));
        assertThat(cmd).startsWith("java", "-jar", "gw.jar").endsWith("--servegate.cache.enabled=true");
    }

    @Test
    void theOptionsDefaultToTheBuiltJarAndOneGigabyteOfHeap() {
        GatewayOptions options = new GatewayOptions();
        new CommandLine(new Object() {
            @CommandLine.Mixin
            GatewayOptions gateway = options;
        }).parseArgs();
        assertThat(options.jar).isEqualTo(Path.of("gateway/target/gateway-0.1.0-SNAPSHOT.jar"));
        assertThat(options.jvmArgs).containsExactly("-Xmx1g");
        assertThat(options.gatewayArgs).isEmpty();

        GatewayOptions given = new GatewayOptions();
        new CommandLine(new Object() {
            @CommandLine.Mixin
            GatewayOptions gateway = given;
        }).parseArgs("--gateway-jar", "x.jar", "--gateway-jvm-arg=-Xmx2g", "--gateway-jvm-arg=-XX:+UseParallelGC",
                "--gateway-arg=--servegate.batching.batch-wait=2ms");
        assertThat(given.jar).isEqualTo(Path.of("x.jar"));
        assertThat(given.jvmArgs).containsExactly("-Xmx2g", "-XX:+UseParallelGC");
        assertThat(given.gatewayArgs).containsExactly("--servegate.batching.batch-wait=2ms");
    }

    @Test
    void aMissingJarFailsBeforeAnythingStarts() {
        assertThatThrownBy(() -> GatewayProcess.start(dir.resolve("none.jar"), List.of(), List.of(),
                dir.resolve("gw.log"))).isInstanceOf(IOException.class).hasMessageContaining("no gateway jar");
    }

    @Test
    void freePortsAreUsable() throws Exception {
        int port = GatewayProcess.freeLoopbackPort();
        assertThat(port).isBetween(1, 65535);
    }

    @Test
    void problemLinesAreErrorsWarningsAndExceptions() {
        assertThat(GatewayProcess.isProblem("2025-01-01T00:00:00Z ERROR 1 --- [main] x : boom")).isTrue();
        assertThat(GatewayProcess.isProblem("2025-01-01T00:00:00Z  WARN 1 --- [main] x : hmm")).isTrue();
        assertThat(GatewayProcess.isProblem("java.io.IOException: reset")).isTrue();
        assertThat(GatewayProcess.isProblem("2025-01-01T00:00:00Z  INFO 1 --- [main] x : started")).isFalse();
    }
}
