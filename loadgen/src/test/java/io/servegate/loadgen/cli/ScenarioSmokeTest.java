package io.servegate.loadgen.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

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
 * process, a real emulated container, real HTTP load; the command must succeed (exit status 0:
 * every run got answers) and write well-formed JSON, HTML and PNG files. Nothing about
 * performance is asserted beyond that.
 *
 * <p>The SLO is far below the measured window: a closed-loop request counts only if it starts and
 * ends inside the window, and each answer (prediction or default) comes by the SLO, so every
 * client answers several times in the window even when a busy machine makes most answers
 * defaults. With the command's default SLO (1 s) and a 1 s window, an answer that took the whole
 * SLO could never fit, and the command exited 1.
 *
 * <p>Needs the gateway's executable jar, which the reactor packages before this module (this
 * module depends on it): {@code mvn verify}, or {@code mvn -pl loadgen -am package} with
 * {@code -Dtest=ScenarioSmokeTest}. A missing jar fails the test; {@code mvn test} alone packages
 * nothing, so it runs whatever jar the last package left.
 */
class ScenarioSmokeTest {

    private static final Path GATEWAY_JAR = Path.of("../gateway/target/gateway-0.1.0-SNAPSHOT.jar");

    @TempDir
    Path out;

    @Test
    @Timeout(300)
    void replicaScalingWritesJsonHtmlAndPlots() throws Exception {
        requireGatewayJar();
        StringWriter stdout = new StringWriter();
        StringWriter stderr = new StringWriter();
        int status = new CommandLine(new LoadGen()).setOut(new PrintWriter(stdout)).setErr(new PrintWriter(stderr))
                .execute("replica-scaling", "--replicas", "1", "--clients-per-replica", "2", "--duration-s", "2",
                        "--warmup-s", "2", "--jvm-warmup-s", "0", "--beta-ms", "2", "--alpha-ms", "0.1",
                        "--slo-ms", "100",
                        "--gateway-jar", GATEWAY_JAR.toString(), "--gateway-jvm-arg=-Xmx256m", "--out", out.toString());
        assertThat(status).as("stdout:%n%s%nstderr:%n%s", stdout, stderr).isZero();

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

    /** Fails, saying how to build it, unless the gateway's jar exists. */
    private static void requireGatewayJar() {
        if (!Files.isRegularFile(GATEWAY_JAR)) {
            fail("no gateway jar at " + GATEWAY_JAR.toAbsolutePath() + ": run `mvn verify`, or "
                    + "`mvn -pl loadgen -am package -Dtest=ScenarioSmokeTest -Dsurefire.failIfNoSpecifiedTests=false` "
                    + "(the reactor packages the gateway before this module)");
        }
    }
}
