package io.servegate.sim.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code bin/sim plan}'s two sources, files or a gateway, are not mixed; each refusal names the rule. */
class PlanCommandTest {

    private static String refusal(String... args) {
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new SimCommand()).setErr(new PrintWriter(err));
        assertThat(cli.execute(args)).as("exit code of %s", String.join(" ", args)).isEqualTo(2);
        return err.toString();
    }

    @Test
    void aGatewayNeedsAPipelineNameAndNoFiles() {
        assertThat(refusal("plan", "--gateway", "http://127.0.0.1:1", "--costs", "sim/pipelines/costs.json"))
                .contains("with --gateway give --pipeline NAME, and no PIPELINE file or --profiles");
        assertThat(refusal("plan", "sim/pipelines/three-stage.json", "--gateway", "http://127.0.0.1:1", "--pipeline",
                "p", "--costs", "sim/pipelines/costs.json"))
                .contains("with --gateway give --pipeline NAME, and no PIPELINE file or --profiles");
    }

    @Test
    void aDryRunOrAProbabilityGoesWithAGateway() {
        assertThat(refusal("plan", "../sim/pipelines/three-stage.json", "--profiles", "../sim/pipelines/classify.json",
                "--costs", "../sim/pipelines/costs.json", "--dry-run"))
                .contains("--dry-run and --probability go with --gateway");
    }

    @Test
    void anUnreachableGatewayIsNamed() {
        assertThat(refusal("plan", "--gateway", "http://127.0.0.1:1", "--pipeline", "p", "--costs",
                "../sim/pipelines/costs.json")).contains("cannot reach the gateway at http://127.0.0.1:1/admin/get_pipeline");
    }
}
