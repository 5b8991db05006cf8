package io.servegate.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.awt.image.BufferedImage;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The replica-scaling scenario end to end at tiny scale: the gateway's real jar as a child
 * process, a real emulated container, real HTTP load; checks that the JSON, HTML and PNG files of
 * the report are produced and well-formed. Nothing about performance is asserted: on a loaded
 * machine the few seconds of load may get only default answers, or none inside the window (the
 * command then exits 1, still writing its report).
 *
 * <p>Needs the gateway's executable jar: in {@code mvn verify} the reactor builds the gateway
 * before this module; alone, build it first ({@code mvn -pl gateway -am package -DskipTests}).
 */
class ScenarioSmokeTest {

    private static final Path GATEWAY_JAR = Path.of("../gateway/target/gateway-0.1.0-SNAPSHOT.jar");

    @TempDir
    Path out;

    @Test
    @Timeout(300)
    void replicaScalingWritesJsonHtmlAndPlots() throws Exception {
        assumeTrue(Files.isRegularFile(GATEWAY_JAR), "the gateway jar is built before this module in mvn verify");
        StringWriter stdout = new StringWriter();
        StringWriter stderr = new StringWriter();
        int status = new CommandLine(new LoadGen()).setOut(new PrintWriter(stdout)).setErr(new PrintWriter(stderr))
                .execute("replica-scaling", "--replicas", "1", "--clients-per-replica", "2", "--duration-s", "1",
                        "--warmup-s", "2", "--jvm-warmup-s", "0", "--beta-ms", "2", "--alpha-ms", "0.1",
                        "--gateway-jar", GATEWAY_JAR.toString(), "--gateway-jvm-arg=-Xmx256m", "--out", out.toString());
        assertThat(status).as("stdout:%n%s%nstderr:%n%s", stdout, stderr).isIn(0, 1);

        List<Path> folders;
        try (Stream<Path> s = Files.list(out)) {
            folders = s.toList();
        }
        assertThat(folders).hasSize(1);
        Path dir = folders.get(0);
        assertThat(dir.getFileName().toString()).matches("replica-scaling-\\d{8}-\\d{6}");

        JsonNode json = new ObjectMapper().readTree(dir.resolve("replica-scaling.json").toFile());
        assertThat(json.path("scenario").asText()).isEqualTo("replica-scaling");
        assertThat(json.path("environment").path("availableProcessors").asInt()).isPositive();
        assertThat(json.path("environment").has("loadAverageAtStart")).isTrue();
        JsonNode m = json.path("measurements").get(0);
        assertThat(m.path("label").asText()).isEqualTo("1 replica");
        assertThat(m.path("clients").asInt()).isEqualTo(2);
        for (String field : List.of("answeredPerSec", "goodputPerSec", "predictions", "defaults", "errors")) {
            assertThat(m.path(field).isNumber()).as(field).isTrue();
        }
        assertThat(json.path("gateways").get(0).path("log").asText()).endsWith("gateway-replica-scaling.log");

        String html = Files.readString(dir.resolve("index.html"));
        assertThat(html).startsWith("<!DOCTYPE html>").contains("Run conditions", "availableProcessors",
                "loadAverageAtStart", "javaVersion", "goodput/s", "1 replica", "<img src=\"throughput.png\"",
                "<img src=\"p99.png\"").endsWith("</html>\n");
        for (String png : List.of("throughput.png", "p99.png")) {
            BufferedImage image = ImageIO.read(dir.resolve(png).toFile());
            assertThat(image).as(png).isNotNull();
            assertThat(image.getWidth()).isEqualTo(800);
            assertThat(image.getHeight()).isEqualTo(480);
        }
    }
}
