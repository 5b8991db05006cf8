package io.servegate.loadgen.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.servegate.loadgen.harness.GatewayProcess;
import io.servegate.sdk.ModelContainer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code drive} against a real gateway (its executable jar as a child process) serving one app
 * from a real emulated container over gRPC: the counts it prints and writes add up, and a query
 * the app cannot take is counted as an error. Nothing about performance is asserted.
 */
@Timeout(300)
class DriveCommandTest {

    private static final Path GATEWAY_JAR = Path.of("../gateway/target/gateway-0.1.0-SNAPSHOT.jar");

    @TempDir
    static Path dir;

    private static GatewayProcess gateway;
    private static ModelContainer<float[], String> container;

    @BeforeAll
    static void startGatewayAndApp() throws Exception {
        if (!Files.isRegularFile(GATEWAY_JAR)) {
            fail("no gateway jar at " + GATEWAY_JAR.toAbsolutePath() + ": run `mvn -pl loadgen -am package "
                    + "-Dtest=DriveCommandTest -Dsurefire.failIfNoSpecifiedTests=false`");
        }
        gateway = GatewayProcess.start(GATEWAY_JAR, List.of("-Xmx256m"), List.of(), dir.resolve("gateway.log"));
        gateway.awaitReady(gateway.admin(), Duration.ofSeconds(120));
        container = ScenarioOptions.emulated("drive", 1, 0.1);
        ScenarioOptions.register(gateway.admin(), "drive", 500, 8, List.of(GatewayProcess.HOST + ":" + container.port()),
                "floats");
    }

    @AfterAll
    static void stop() throws Exception {
        if (container != null) {
            container.close();
        }
        if (gateway != null) {
            gateway.close();
        }
    }

    private static int drive(StringWriter out, String... args) {
        List<String> all = new java.util.ArrayList<>(List.of("drive", "--url",
                "http://" + GatewayProcess.HOST + ":" + gateway.port(), "--app", "drive"));
        all.addAll(List.of(args));
        return new CommandLine(new LoadGen()).setOut(new PrintWriter(out)).setErr(new PrintWriter(new StringWriter()))
                .execute(all.toArray(String[]::new));
    }

    @Test
    void everyScheduledQueryIsAPredictionADefaultOrAnError() throws Exception {
        Path json = dir.resolve("drive.json");
        StringWriter out = new StringWriter();
        int status = drive(out, "--rate", "100", "--duration-s", "2", "--input-shape", "2,4", "--slo-ms", "500",
                "--out-file", json.toString());
        assertThat(status).as(out.toString()).isZero();
        assertThat(out.toString()).contains("goodput", "predictions within 500.0 ms", "latency ms: p50");

        JsonNode r = new ObjectMapper().readTree(json.toFile());
        JsonNode load = r.path("load");
        JsonNode answers = r.path("answers");
        assertThat(load.path("scheduled").asLong()).as("2 s at 100/s").isBetween(120L, 280L);
        assertThat(load.path("errors").asLong()).isZero();
        assertThat(answers.path("predictions").asLong() + answers.path("defaults").asLong())
                .isEqualTo(load.path("requests").asLong());
        assertThat(load.path("requests").asLong() + load.path("unanswered").asLong())
                .isEqualTo(load.path("scheduled").asLong());
        // how many are in time depends on the machine's load: only that they are counted among the predictions
        assertThat(answers.path("goodput").asLong()).isBetween(0L, answers.path("predictions").asLong());
        assertThat(r.path("goodputPerSec").asDouble()).isEqualTo(answers.path("goodput").asLong() / 2.0);
        assertThat(r.path("settings").path("input").asText()).isEqualTo("8 random floats");
        assertThat(r.path("settings").path("warmupS").asDouble()).as("warms up by default").isEqualTo(5.0);
    }

    @Test
    void queriesTheAppCannotTakeAreErrors() {
        StringWriter out = new StringWriter();
        int status = drive(out, "--rate", "50", "--duration-s", "1", "--warmup-s", "0", "--input-bytes", "16");
        assertThat(status).as("no query answered").isEqualTo(1);
        assertThat(out.toString()).contains("0 predictions within", "first error:", "400");
    }

    @Test
    void shapeAndBytesTogetherAreAUsageError() {
        assertThat(drive(new StringWriter(), "--rate", "1", "--input-shape", "4", "--input-bytes", "4")).isEqualTo(2);
    }
}
