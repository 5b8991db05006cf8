package io.servegate.gateway.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servegate.gateway.config.ServegateProperties;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/** Which commands and environments deploy_model may hand the process manager. */
class ProcessCommandPolicyTest {

    private static final List<String> ENV = List.of("INTRA_OP_THREADS", "MODEL_PATH");
    private static final String OWN_JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();

    private final ProcessCommandPolicy defaults = new ProcessCommandPolicy(ProcessCommandPolicy.defaultCommands(), ENV,
            true, true);

    @Test
    void theProjectsContainersAsTheDocumentationAndTheDemoRunThemAreAllowed() {
        for (List<String> command : List.of(
                List.of("java", "-jar", "containers/onnx/target/onnx-container.jar", "--model",
                        "containers/onnx/models/fmnist-cnn.onnx"),
                List.of(OWN_JAVA, "-jar", "containers/onnx/target/onnx-container.jar", "--model",
                        "containers/onnx/models/fmnist-cnn.onnx"),
                List.of("java", "-jar", "containers/emulated/target/emulated-container.jar", "--beta-ms", "2"),
                List.of("java", "-jar", "containers/noop/target/noop-container.jar"),
                List.of("/usr/bin/python3", "containers/sklearn/serve.py"),
                List.of("/usr/bin/python3", "containers/pytorch/serve.py"))) {
            assertThat(defaults.refusal(command, Map.of("INTRA_OP_THREADS", "1"))).as("%s", command).isEmpty();
        }
    }

    @Test
    void anythingElseIsRefusedNamingTheCommandAndTheProperty() {
        for (List<String> command : List.of(
                List.of("/bin/sh", "-c", "touch /tmp/owned"),
                List.of("java", "-jar", "/tmp/evil.jar"),
                List.of("java", "-javaagent:/tmp/evil.jar", "-jar", "containers/noop/target/noop-container.jar"),
                List.of("java", "-jar", "containers/noop/target/../../../tmp/evil.jar"),
                List.of("java", "-jar"),
                List.of("/usr/bin/python3", "-c", "import os"),
                List.of("/usr/bin/python3", "-m", "http.server"),
                List.of("python3", "containers/sklearn/serve.py"))) {
            assertThat(defaults.refusal(command, Map.of())).as("%s", command).hasValueSatisfying(cause -> assertThat(cause)
                    .contains("command [" + command.get(0), "is not allowed",
                            "servegate.containers.process.allowed-commands", "[java, -jar, containers/onnx"));
        }
    }

    @Test
    void environmentVariablesOutsideTheAllowedOnesAreRefused() {
        List<String> command = List.of("java", "-jar", "containers/noop/target/noop-container.jar");
        for (String name : List.of("LD_PRELOAD", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "PYTHONPATH", "PATH")) {
            assertThat(defaults.refusal(command, Map.of("INTRA_OP_THREADS", "1", name, "/tmp/x")))
                    .hasValueSatisfying(cause -> assertThat(cause).contains("'" + name + "'",
                            "servegate.containers.process.allowed-env", "INTRA_OP_THREADS"));
        }
    }

    @Test
    void withoutAnAdminTokenEveryCommandIsRefusedUnlessTheOperatorOptsOut() {
        List<String> allowed = List.of("java", "-jar", "containers/noop/target/noop-container.jar");
        ProcessCommandPolicy noToken = new ProcessCommandPolicy(ProcessCommandPolicy.defaultCommands(), ENV, false,
                true);
        assertThat(noToken.refusal(allowed, Map.of())).hasValueSatisfying(cause -> assertThat(cause)
                .contains("servegate.admin.token", "servegate.containers.process.require-admin-token=false"));
        ProcessCommandPolicy optedOut = new ProcessCommandPolicy(ProcessCommandPolicy.defaultCommands(), ENV, false,
                false);
        assertThat(optedOut.refusal(allowed, Map.of())).isEmpty();
        assertThat(optedOut.refusal(List.of("/bin/sh"), Map.of())).as("the allowlist still applies").isPresent();
    }

    @Test
    void anEmptyAllowlistAllowsNothingAndEmptyPrefixesAreRejected() {
        ProcessCommandPolicy none = new ProcessCommandPolicy(List.of(), ENV, true, true);
        assertThat(none.refusal(List.of("java", "-jar", "containers/noop/target/noop-container.jar"), Map.of()))
                .hasValueSatisfying(cause -> assertThat(cause).contains("(none)"));
        assertThatThrownBy(() -> new ProcessCommandPolicy(List.of(List.of()), ENV, true, true))
                .hasMessageContaining("non-empty");
        assertThatThrownBy(() -> new ProcessCommandPolicy(List.of(List.of("java", "")), ENV, true, true))
                .hasMessageContaining("non-empty");
    }

    @Test
    void refusedCommandsAreQuotedSafely() {
        assertThat(defaults.refusal(List.of("/bin/sh\u001b[2J", "x".repeat(200)), Map.of()))
                .hasValueSatisfying(cause -> assertThat(cause).contains("/bin/sh\\u001b[2J", "x".repeat(80) + "...")
                        .doesNotContain("\u001b", "x".repeat(81)));
    }

    @Test
    void theAllowlistBindsFromYamlListsAndCommaSeparatedPropertiesAndDefaultsToTheProjectsContainers() {
        String key = "servegate.containers.process.";
        // YAML's [[java, -jar, x.jar], ...] arrives flattened like this
        ServegateProperties.ProcessManager configured = bind(Map.of(key + "allowed-commands[0][0]", "java",
                key + "allowed-commands[0][1]", "-jar", key + "allowed-commands[0][2]", "/opt/x.jar",
                key + "allowed-commands[1]", "/usr/bin/python3,/opt/serve.py", key + "allowed-env", "MODEL_PATH"));
        assertThat(configured.allowedCommands()).containsExactly(List.of("java", "-jar", "/opt/x.jar"),
                List.of("/usr/bin/python3", "/opt/serve.py"));
        assertThat(configured.allowedEnv()).containsExactly("MODEL_PATH");
        assertThat(configured.requireAdminToken()).isTrue();

        ServegateProperties.ProcessManager defaults = bind(Map.of("servegate.cache.enabled", "true"));
        assertThat(defaults.allowedCommands()).isEqualTo(ProcessCommandPolicy.defaultCommands());
        assertThat(defaults.allowedEnv()).contains("INTRA_OP_THREADS", "MODEL_PATH").doesNotContain("LD_PRELOAD");
    }

    private static ServegateProperties.ProcessManager bind(Map<String, String> properties) {
        return new Binder(new MapConfigurationPropertySource(properties))
                .bindOrCreate("servegate", ServegateProperties.class).containers().process();
    }
}
