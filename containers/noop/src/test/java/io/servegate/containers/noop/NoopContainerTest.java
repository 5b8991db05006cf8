package io.servegate.containers.noop;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.InferResult;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class NoopContainerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @Test
    void answersZeroPerInputOverGrpc() throws Exception {
        try (ModelContainer<String, String> container = NoopContainer.builder(TensorType.STRINGS)
                .name("noop").host("127.0.0.1").port(0).build().start();
                ContainerClient client = ContainerClient.connect("127.0.0.1:" + container.port())) {
            InferResult<String> result = client.infer("noop", "", TensorType.STRINGS, List.of("a", "bb", "ccc"),
                    TensorType.STRINGS, TIMEOUT).get();
            assertThat(result.outputs()).containsExactly("0", "0", "0");
            assertThat(result.modelName()).isEqualTo("noop");
        }
    }

    @Test
    void rejectsUnknownInputTypeAsUsageError() {
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new NoopContainer()).setErr(new PrintWriter(err));
        int code = cli.execute("--name", "noop", "--port", "0", "--input-type", "tensors");
        assertThat(code).isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(err.toString()).contains("unknown input type 'tensors'");

        StringWriter noName = new StringWriter();
        assertThat(new CommandLine(new NoopContainer()).setErr(new PrintWriter(noName)).execute("--port", "0"))
                .isEqualTo(CommandLine.ExitCode.USAGE);
        assertThat(noName.toString()).contains("a model name is required (--name or MODEL_NAME)");
    }
}
