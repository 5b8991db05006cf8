package io.servegate.loadgen.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
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
 * The scheduling scenario's cases and options, and its report end to end at tiny scale (the
 * gateway's real jar, real emulated container processes, real HTTP load). Nothing about
 * performance is asserted.
 */
class SchedulingCommandTest {

    private static final Path GATEWAY_JAR = Path.of("../gateway/target/gateway-0.1.0-SNAPSHOT.jar");

    @TempDir
    Path out;

    @Test
    void theCasesAreIssue12sLoadsWithTheirOptima() {
        List<SchedulingCommand.Case> cases = SchedulingCommand.cases(5, 0.5, 20, 4);
        assertThat(cases).extracting(SchedulingCommand.Case::name)
                .containsExactly("r1-0.8x", "r1-2x", "r1-4x", "r8-table4", "r1-gamma");
        assertThat(cases).extracting(SchedulingCommand.Case::ratePerSec)
                .containsExactly(800.0, 2000.0, 4000.0, 5839.0, 800.0);
        assertThat(cases).extracting(c -> c.optimum().perSec()).satisfiesExactly(
                o -> assertThat(o).isCloseTo(800, within(1e-9)), o -> assertThat(o).isCloseTo(1200, within(1e-9)),
                o -> assertThat(o).isCloseTo(4000 / 3.0, within(1e-9)), o -> assertThat(o).isEqualTo(5839),
                o -> assertThat(o).isCloseTo(800, within(1e-9)));
        assertThat(cases.get(3).replicas()).isEqualTo(8);
        assertThat(cases.get(4).arrivals().describe()).contains("gamma");
    }

    @Test
    void unknownOrRepeatedCasesAndPoliciesAreUsageErrors() {
        assertThat(execute("scheduling", "--cases", "r1-9x")).isEqualTo(2);
        assertThat(execute("scheduling", "--cases", "r1-2x,r1-2x")).isEqualTo(2);
        assertThat(execute("scheduling", "--policies", "fifo")).isEqualTo(2);
        assertThat(execute("scheduling", "--policies", "symphony,symphony")).isEqualTo(2);
        assertThat(execute("scheduling", "--slo-ms", "10")).as("no room for two batches of one").isEqualTo(2);
    }

    @Test
    @Timeout(300)
    void aTinyRunWritesOneReportWithAColumnPerPolicy() throws Exception {
        assumeTrue(Files.isRegularFile(GATEWAY_JAR), "the gateway jar is built before this module in mvn verify");
        StringWriter stdout = new StringWriter();
        StringWriter stderr = new StringWriter();
        int status = new CommandLine(new LoadGen()).setOut(new PrintWriter(stdout)).setErr(new PrintWriter(stderr))
                .execute("scheduling", "--cases", "r1-0.8x", "--policies", "clipper,symphony", "--duration-s", "1",
                        "--warmup-s", "0", "--jvm-warmup-s", "0", "--gateway-jar", GATEWAY_JAR.toString(),
                        "--gateway-jvm-arg=-Xmx256m", "--out", out.toString());
        assertThat(status).as("stdout:%n%s%nstderr:%n%s", stdout, stderr).isIn(0, 1);

        Path dir;
        try (Stream<Path> s = Files.list(out)) {
            dir = s.findFirst().orElseThrow();
        }
        assertThat(dir.getFileName().toString()).matches("scheduling-\\d{8}-\\d{6}");
        JsonNode json = new ObjectMapper().readTree(dir.resolve("scheduling.json").toFile());
        JsonNode runs = json.path("runs");
        assertThat(runs).hasSize(2);
        assertThat(runs.get(0).path("policy").asText()).isEqualTo("clipper");
        assertThat(runs.get(1).path("policy").asText()).isEqualTo("symphony");
        for (JsonNode r : runs) {
            assertThat(r.path("caseName").asText()).isEqualTo("r1-0.8x");
            assertThat(r.path("optimumPerSec").asDouble()).isEqualTo(800);
            assertThat(r.path("measurement").path("goodputPerSec").isNumber()).isTrue();
            assertThat(r.path("cores").path("available").asInt()).isPositive();
        }
        assertThat(json.path("table4")).hasSize(5);
        assertThat(json.path("gateways").get(1).path("command").toString())
                .contains("--servegate.scheduling.policy=symphony");

        String html = Files.readString(dir.resolve("index.html"));
        assertThat(html).startsWith("<!DOCTYPE html>").contains("Goodput against the analytic optimum",
                "clipper goodput/s", "symphony goodput/s", "Late answers against the bare-timer control",
                "Where the CPU went", "Run conditions", "<img src=\"goodput-vs-optimum.png\"",
                "<img src=\"late-vs-control.png\"").endsWith("</html>\n");
        for (String png : List.of("goodput-vs-optimum.png", "late-vs-control.png")) {
            BufferedImage image = ImageIO.read(dir.resolve(png).toFile());
            assertThat(image).as(png).isNotNull();
            assertThat(image.getWidth()).isEqualTo(800);
        }
        assertThat(stdout.toString()).contains("wrote " + dir.resolve("index.html"));
    }

    private static int execute(String... args) {
        return new CommandLine(new LoadGen()).setOut(new PrintWriter(new StringWriter()))
                .setErr(new PrintWriter(new StringWriter())).execute(args);
    }
}
