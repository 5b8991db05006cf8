package io.servegate.gateway.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.servegate.gateway.config.ServegateProperties;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/** Which commands and environments deploy_model may hand the process manager. */
class ProcessCommandPolicyTest {

    private static final List<String> ENV = List.of("INTRA_OP_THREADS", "MODEL_PATH");
    private static final ModelDirectories NO_MODELS = new ModelDirectories(List.of(), List.of("MODEL_PATH"));
    private static final PathArguments DEFAULT_PATHS = new PathArguments(PathArguments.defaults(), List.of());
    private static final String OWN_JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();

    private final ProcessCommandPolicy defaults = new ProcessCommandPolicy(ProcessCommandPolicy.defaultCommands(), ENV,
            true, true, NO_MODELS, DEFAULT_PATHS);

    @Test
    void theProjectsContainersAsTheDocumentationAndTheDemoRunThemAreAllowed() {
        // the tests run in gateway/, the documentation from the repository root
        ProcessCommandPolicy defaults = new ProcessCommandPolicy(ProcessCommandPolicy.defaultCommands(), ENV, true,
                true, new ModelDirectories(List.of("../containers/onnx/models"), List.of("MODEL_PATH")), DEFAULT_PATHS);
        for (List<String> command : List.of(
                List.of("java", "-jar", "containers/onnx/target/onnx-container.jar", "--model",
                        "../containers/onnx/models/fmnist-cnn.onnx"),
                List.of(OWN_JAVA, "-jar", "containers/onnx/target/onnx-container.jar", "--model",
                        "../containers/onnx/models/fmnist-cnn.onnx"),
                List.of("java", "-jar", "containers/emulated/target/emulated-container.jar", "--beta-ms", "2"),
                List.of("java", "-jar", "containers/noop/target/noop-container.jar"),
                List.of("/usr/bin/python3", "containers/sklearn/serve.py"),
                List.of("/usr/bin/python3", "containers/pytorch/serve.py"),
                List.of("/usr/bin/python3", "containers/image-classifier/serve.py"))) {
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
                true, NO_MODELS, DEFAULT_PATHS);
        assertThat(noToken.refusal(allowed, Map.of())).hasValueSatisfying(cause -> assertThat(cause)
                .contains("servegate.admin.token", "servegate.containers.process.require-admin-token=false"));
        ProcessCommandPolicy optedOut = new ProcessCommandPolicy(ProcessCommandPolicy.defaultCommands(), ENV, false,
                false, NO_MODELS, DEFAULT_PATHS);
        assertThat(optedOut.refusal(allowed, Map.of())).isEmpty();
        assertThat(optedOut.refusal(List.of("/bin/sh"), Map.of())).as("the allowlist still applies").isPresent();
    }

    @Test
    void anEmptyAllowlistAllowsNothingAndEmptyPrefixesAreRejected() {
        ProcessCommandPolicy none = new ProcessCommandPolicy(List.of(), ENV, true, true, NO_MODELS, DEFAULT_PATHS);
        assertThat(none.refusal(List.of("java", "-jar", "containers/noop/target/noop-container.jar"), Map.of()))
                .hasValueSatisfying(cause -> assertThat(cause).contains("(none)"));
        assertThatThrownBy(() -> new ProcessCommandPolicy(List.of(List.of()), ENV, true, true, NO_MODELS, DEFAULT_PATHS))
                .hasMessageContaining("non-empty");
        assertThatThrownBy(() -> new ProcessCommandPolicy(List.of(List.of("java", "")), ENV, true, true, NO_MODELS, DEFAULT_PATHS))
                .hasMessageContaining("non-empty");
    }

    @Test
    void modelPathsMustNameExistingFilesInsideTheModelDirectoriesWithLinksResolved(@TempDir Path tmp)
            throws Exception {
        Path models = Files.createDirectories(tmp.resolve("models"));
        Path outside = Files.writeString(tmp.resolve("planted.pkl"), "x");
        Path inside = Files.writeString(models.resolve("m.onnx"), "x");
        Files.createSymbolicLink(models.resolve("escape.pkl"), outside);
        Files.createSymbolicLink(tmp.resolve("elsewhere.onnx"), inside);
        ModelDirectories dirs = new ModelDirectories(List.of(models.toString()), List.of("MODEL_PATH", "MODEL_DIR"));
        ProcessCommandPolicy policy = new ProcessCommandPolicy(ProcessCommandPolicy.defaultCommands(),
                List.of("MODEL_PATH", "MODEL_DIR"), true, true, dirs, DEFAULT_PATHS);
        List<String> sklearn = List.of("/usr/bin/python3", "containers/sklearn/serve.py");
        for (String ok : List.of(inside.toString(), models.toString(), tmp.resolve("elsewhere.onnx").toString(),
                models + "/./m.onnx")) {
            assertThat(policy.refusal(sklearn, Map.of("MODEL_PATH", ok))).as(ok).isEmpty();
        }
        for (String bad : List.of(outside.toString(), models.resolve("escape.pkl").toString(), models + "/../planted.pkl",
                models.resolve("none.pkl").toString(), "/", "bad\u0000path")) {
            assertThat(policy.refusal(sklearn, Map.of("MODEL_PATH", bad))).as(bad).hasValueSatisfying(cause ->
                    assertThat(cause).contains("MODEL_PATH=", "servegate.containers.model-directories")
                            .doesNotContain("\u0000"));
        }
        assertThat(policy.refusal(sklearn, Map.of("MODEL_DIR", tmp.toString()))).isPresent();
        assertThat(policy.refusal(sklearn, Map.of("SERVEGATE_MODEL_DIRS", "/"))).hasValueSatisfying(cause ->
                assertThat(cause).contains("set by the container manager"));
        assertThat(dirs.envValue()).isEqualTo(models.toRealPath().toString());
        assertThat(NO_MODELS.refusal(Map.of("MODEL_PATH", inside.toString()))).as("no directories: no model path")
                .hasValueSatisfying(cause -> assertThat(cause).contains("(none)"));
        assertThatThrownBy(() -> new ModelDirectories(List.of("/a:/b"), List.of())).hasMessageContaining("':'");
    }

    /**
     * The options of allowed programs that name files: what they read must lie in the model
     * directories like MODEL_PATH, what they write in an output directory; with none configured,
     * no output option is allowed ({@code --profile-out ~/.bashrc} overwrote any file the gateway's
     * user could write).
     */
    @Test
    void pathArgumentsAreConfinedLikeModelPaths(@TempDir Path tmp) throws Exception {
        Path models = Files.createDirectories(tmp.resolve("models"));
        Path out = Files.createDirectories(tmp.resolve("out"));
        Path inside = Files.writeString(models.resolve("w.pt"), "x");
        Path outside = Files.writeString(tmp.resolve("planted.pt"), "x");
        Files.createSymbolicLink(out.resolve("escape"), tmp);
        Files.createSymbolicLink(out.resolve("bashrc"), tmp.resolve(".bashrc"));
        ModelDirectories dirs = new ModelDirectories(List.of(models.toString()), List.of("MODEL_PATH"));
        List<String> classifier = List.of("/usr/bin/python3", "containers/image-classifier/serve.py");
        List<String> onnx = List.of("java", "-jar", "containers/onnx/target/onnx-container.jar");
        ProcessCommandPolicy nowhere = new ProcessCommandPolicy(ProcessCommandPolicy.defaultCommands(), ENV, true,
                true, dirs, DEFAULT_PATHS);
        ProcessCommandPolicy withOutput = new ProcessCommandPolicy(ProcessCommandPolicy.defaultCommands(), ENV, true,
                true, dirs, new PathArguments(PathArguments.defaults(), List.of(out.toString())));

        String bashrc = tmp.resolve(".bashrc").toString();
        for (List<String> args : List.of(List.of("--profile", "--profile-out", bashrc), List.of("--profile-out=" + bashrc),
                List.of("--profile-out", out.resolve("p.json").toString()))) {
            assertThat(nowhere.refusal(concat(classifier, args), Map.of())).as("%s", args).hasValueSatisfying(cause ->
                    assertThat(cause).contains("argument --profile-out", "servegate.containers.process.output-directories",
                            "(none)"));
        }
        for (String ok : List.of(out.resolve("p.json").toString(), out + "/./p.json")) {
            assertThat(withOutput.refusal(concat(classifier, List.of("--profile-out", ok)), Map.of())).as(ok).isEmpty();
            assertThat(withOutput.refusal(concat(classifier, List.of("--profile-out=" + ok)), Map.of())).isEmpty();
        }
        for (String bad : List.of(bashrc, out + "/../.bashrc", out + "/escape/.bashrc", out + "/bashrc",
                out + "/no-such-dir/p.json", out.toString(), out + "/..", "/")) {
            assertThat(withOutput.refusal(concat(classifier, List.of("--profile-out", bad)), Map.of())).as(bad)
                    .hasValueSatisfying(cause -> assertThat(cause).contains("argument --profile-out"));
        }

        assertThat(withOutput.refusal(concat(classifier, List.of("--weights", inside.toString())), Map.of())).isEmpty();
        for (List<String> args : List.of(List.of("--weights", outside.toString()), List.of("--weights=" + outside),
                List.of("--weights", models + "/../planted.pt"))) {
            assertThat(withOutput.refusal(concat(classifier, args), Map.of())).as("%s", args).hasValueSatisfying(cause ->
                    assertThat(cause).contains("argument --weights", "servegate.containers.model-directories"));
        }
        assertThat(withOutput.refusal(concat(onnx, List.of("--models", inside + "," + inside)), Map.of())).isEmpty();
        for (List<String> args : List.of(List.of("--models", inside + "," + outside), List.of("--model", outside.toString()),
                List.of("--model-dir", tmp.toString()))) {
            assertThat(withOutput.refusal(concat(onnx, args), Map.of())).as("%s", args).isPresent();
        }
        // the same option of another program is not a path
        assertThat(withOutput.refusal(List.of("java", "-jar", "containers/emulated/target/emulated-container.jar",
                "--models", "3"), Map.of())).isEmpty();
    }

    private static List<String> concat(List<String> a, List<String> b) {
        return java.util.stream.Stream.concat(a.stream(), b.stream()).toList();
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
        ServegateProperties.ProcessManager paths = bind(Map.of(key + "path-arguments[/opt/serve.py].output", "--out",
                key + "path-arguments[/opt/serve.py].model", "--weights,--vocab", key + "output-directories",
                "/var/lib/servegate/out"));
        assertThat(paths.pathArguments()).containsExactly(Map.entry("/opt/serve.py",
                new PathArguments.Options(List.of("--weights", "--vocab"), List.of("--out"))));
        assertThat(paths.outputDirectories()).containsExactly("/var/lib/servegate/out");

        ServegateProperties.ProcessManager defaults = bind(Map.of("servegate.cache.enabled", "true"));
        assertThat(defaults.allowedCommands()).isEqualTo(ProcessCommandPolicy.defaultCommands());
        assertThat(defaults.allowedEnv()).contains("INTRA_OP_THREADS", "MODEL_PATH").doesNotContain("LD_PRELOAD");
        assertThat(defaults.pathArguments()).isEqualTo(PathArguments.defaults());
        assertThat(defaults.outputDirectories()).isEmpty();
        Map<String, String> classifier = Map.of("ARCH", "resnet18", "IMAGE_SIZE", "64", "PRECISION", "fp32",
                "CUDNN_BENCHMARK", "false", "SEED", "1", "MAX_BATCH_SIZE", "32", "WARMUP_BATCH_SIZES", "1,32",
                "WARMUP_RUNS", "2", "DEVICE", "cpu");
        assertThat(new ProcessCommandPolicy(defaults.allowedCommands(), defaults.allowedEnv(), true, true, NO_MODELS, DEFAULT_PATHS)
                .refusal(List.of("/usr/bin/python3", "containers/image-classifier/serve.py"), classifier))
                .as("the image classifier with its settings, by default").isEmpty();
    }

    private static ServegateProperties.ProcessManager bind(Map<String, String> properties) {
        return new Binder(new MapConfigurationPropertySource(properties))
                .bindOrCreate("servegate", ServegateProperties.class).containers().process();
    }
}
