package io.servegate.loadgen.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code cpu-per-query --tracing-ratio}: the gateway with tracing on is measured beside the floor
 * and the gateway with it off, its spans reach the OTLP sink, and the report has its ratios to
 * the gateway with tracing off. Real gateway and floor processes; nothing about the figures is
 * asserted.
 */
class CpuPerQueryCommandTest {

    private static final Path GATEWAY_JAR = Path.of("../gateway/target/gateway-0.1.0-SNAPSHOT.jar");

    @TempDir
    Path dir;

    @Test
    void tracingOnIsMeasuredBesideTracingOffAndExportsItsSpans() throws Exception {
        if (!Files.isRegularFile(GATEWAY_JAR)) {
            fail("no gateway jar at " + GATEWAY_JAR.toAbsolutePath() + ": run `mvn -pl loadgen -am package "
                    + "-DskipTests` first");
        }
        StringWriter err = new StringWriter();
        int code = new CommandLine(new LoadGen()).setOut(new PrintWriter(new StringWriter()))
                .setErr(new PrintWriter(err, true)).execute("cpu-per-query", "--gateway-jar", GATEWAY_JAR.toString(),
                        "--gateway-jvm-arg=-Xmx256m", "--floor-jvm-arg=-Xmx256m", "--rate", "50", "--rounds", "1",
                        "--duration-s", "3", "--warmup-s", "1", "--jvm-warmup-s", "2", "--tracing-ratio", "1",
                        "--out", dir.toString());
        JsonNode report;
        try (Stream<Path> runs = Files.list(dir)) {
            report = new ObjectMapper().readTree(runs.findFirst().orElseThrow().resolve("cpu-per-query.json").toFile());
        }
        assertThat(code).as("stderr: %s, legs: %s", err, report.path("legs")).isZero();
        List<String> servers = new ArrayList<>();
        report.path("legs").forEach(leg -> {
            servers.add(leg.path("server").asText());
            assertThat(leg.path("answered").asLong()).as(leg.toString()).isPositive();
        });
        assertThat(servers).containsExactlyInAnyOrder("floor", "gateway", "tracing-1.0");
        assertThat(report.path("settings").path("otlpExports").path("requests").asLong())
                .as("the traced gateway's spans reached the sink").isPositive();
        JsonNode row = report.path("ratios").get(0);
        assertThat(row.path("tracingCpuOverGateway").has("tracing-1.0")).as(row.toString()).isTrue();
        assertThat(row.path("tracingAllocOverGateway").has("tracing-1.0")).as(row.toString()).isTrue();
    }
}
