package io.servegate.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.GatewayApplication;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.containers.ProcessContainerManager;
import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.JavaCommand;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * deploy_model with a {@code command}, through a real gateway's admin port, for the process
 * manager: an allowed command is run (its replica becomes ready), anything else gets 403 with
 * the cause and changes nothing, and without an admin token every command is refused unless the
 * operator opted out.
 */
class DeployCommandTest {

    private static final String TOKEN = "deploy-command-test-token-93b2";

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final ObjectMapper json = new ObjectMapper();

    @TempDir
    Path tmp;

    @Test
    void withATokenOnlyAllowedCommandsAndVariablesRun() throws Exception {
        List<String> emulated = JavaCommand.of(tmp, ContainerProcess.EMULATED);
        Path marker = tmp.resolve("ran");
        try (ConfigurableApplicationContext gateway = start("servegate.admin.token=" + TOKEN,
                "servegate.containers.process.allowed-commands[0]=" + String.join(",", emulated))) {
            int port = gateway.getBean(AdminServer.class).port();

            JsonNode refused = post(port, "deploy_model", deploy("shell", List.of("/bin/sh", "-c", "touch " + marker),
                    Map.of()), TOKEN, 403);
            assertThat(refused.get("error").asString()).isEqualTo("forbidden");
            assertThat(refused.get("cause").asString()).contains("command [/bin/sh, -c, touch", "is not allowed",
                    "servegate.containers.process.allowed-commands", "[" + emulated.get(0) + ", " + emulated.get(1));
            JsonNode env = post(port, "deploy_model", deploy("preload", emulated, Map.of("LD_PRELOAD", "/tmp/x.so")),
                    TOKEN, 403);
            assertThat(env.get("cause").asString()).contains("'LD_PRELOAD'", "allowed-env");
            // a configured allowlist replaces the built-in one
            post(port, "deploy_model", deploy("noop", List.of("java", "-jar", "containers/noop/target/noop-container.jar"),
                    Map.of()), TOKEN, 403);
            post(port, "deploy_model", deploy("shell", List.of("/bin/sh"), Map.of()), null, 401);
            // refused deployments registered nothing and ran nothing
            post(port, "get_model", Map.of("model_name", "shell", "model_version", "1"), TOKEN, 404);
            post(port, "get_model", Map.of("model_name", "preload", "model_version", "1"), TOKEN, 404);
            assertThat(marker).doesNotExist();

            JsonNode deployed = post(port, "deploy_model", deploy("emu", emulated, Map.of("BETA_MS", "1")), TOKEN, 200);
            assertThat(deployed.get("manager").asString()).isEqualTo("process");
            awaitReady(port, "emu");
        }
    }

    @Test
    void withoutATokenCommandsAreRefusedUnlessTheOperatorOptsOut() throws Exception {
        List<String> emulated = JavaCommand.of(tmp, ContainerProcess.EMULATED);
        String allow = "servegate.containers.process.allowed-commands[0]=" + String.join(",", emulated);
        try (ConfigurableApplicationContext gateway = start(allow)) {
            int port = gateway.getBean(AdminServer.class).port();
            JsonNode refused = post(port, "deploy_model", deploy("emu", emulated, Map.of()), null, 403);
            assertThat(refused.get("cause").asString()).contains("servegate.admin.token",
                    "servegate.containers.process.require-admin-token=false");
            post(port, "get_model", Map.of("model_name", "emu", "model_version", "1"), null, 404);
            // what needs no command is unaffected
            post(port, "add_model", Map.of("model_name", "m", "model_version", "1", "input_type", "floats"), null, 200);
        }
        try (ConfigurableApplicationContext gateway = start(allow,
                "servegate.containers.process.require-admin-token=false")) {
            int port = gateway.getBean(AdminServer.class).port();
            post(port, "deploy_model", deploy("shell", List.of("/bin/sh", "-c", "true"), Map.of()), null, 403);
            post(port, "deploy_model", deploy("emu", emulated, Map.of()), null, 200);
            awaitReady(port, "emu");
        }
    }

    @Test
    void modelPathsMustLieInTheModelDirectoriesAfterLinksAreResolved() throws Exception {
        List<String> emulated = JavaCommand.of(tmp, ContainerProcess.EMULATED);
        Path models = Files.createDirectories(tmp.resolve("models"));
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Path planted = Files.writeString(outside.resolve("planted.pkl"), "not a model");
        Path model = Files.writeString(models.resolve("model.onnx"), "a model");
        Path link = Files.createSymbolicLink(models.resolve("link.pkl"), planted);
        Files.createSymbolicLink(tmp.resolve("models-link"), models);
        try (ConfigurableApplicationContext gateway = start("servegate.admin.token=" + TOKEN,
                "servegate.containers.process.allowed-commands[0]=" + String.join(",", emulated),
                "servegate.containers.model-directories[0]=" + tmp.resolve("models-link"))) {
            int port = gateway.getBean(AdminServer.class).port();
            for (String path : List.of(planted.toString(), link.toString(), models + "/../outside/planted.pkl",
                    models.resolve("missing.pkl").toString(), "relative/planted.pkl")) {
                JsonNode refused = post(port, "deploy_model", deploy("evil", emulated, Map.of("MODEL_PATH", path)),
                        TOKEN, 403);
                assertThat(refused.get("cause").asString()).as(path).contains("MODEL_PATH", path,
                        "servegate.containers.model-directories");
            }
            // the manager sets SERVEGATE_MODEL_DIRS itself; a caller may not
            post(port, "deploy_model", deploy("evil", emulated, Map.of("SERVEGATE_MODEL_DIRS", outside.toString())),
                    TOKEN, 403);
            post(port, "get_model", Map.of("model_name", "evil", "model_version", "1"), TOKEN, 404);

            post(port, "deploy_model", deploy("good", emulated, Map.of("MODEL_PATH", model.toString())), TOKEN, 200);
            awaitReady(port, "good");
            ProcessHandle child = gateway.getBean(ProcessContainerManager.class).process("good-1-p0").orElseThrow();
            String environ = Files.readString(Path.of("/proc", Long.toString(child.pid()), "environ"));
            assertThat(List.of(environ.split("\0"))).contains("SERVEGATE_MODEL_DIRS=" + models.toRealPath(),
                    "MODEL_PATH=" + model);
        }
    }

    /** An allowed command's option that writes a file ({@code --profile-out}) may not name one outside the output directories. */
    @Test
    void anOutputOptionOutsideTheOutputDirectoriesIsRefused() throws Exception {
        Path target = tmp.resolve(".bashrc");
        List<String> classifier = List.of("/usr/bin/python3", "containers/image-classifier/serve.py", "--profile",
                "--profile-out", target.toString());
        try (ConfigurableApplicationContext gateway = start("servegate.admin.token=" + TOKEN)) {
            int port = gateway.getBean(AdminServer.class).port();
            JsonNode refused = post(port, "deploy_model", deploy("profiled", classifier, Map.of()), TOKEN, 403);
            assertThat(refused.get("cause").asString()).contains("argument --profile-out", target.toString(),
                    "servegate.containers.process.output-directories");
            post(port, "get_model", Map.of("model_name", "profiled", "model_version", "1"), TOKEN, 404);
        }
        assertThat(target).doesNotExist();
    }

    private static ConfigurableApplicationContext start(String... properties) {
        List<String> all = new ArrayList<>(List.of("server.port=0", "servegate.admin.port=0",
                "servegate.containers.probe-interval=200ms", "servegate.containers.stop-grace-period=5s"));
        all.addAll(List.of(properties));
        return new SpringApplicationBuilder(GatewayApplication.class).properties(all.toArray(String[]::new)).run();
    }

    private static Map<String, Object> deploy(String model, List<String> command, Map<String, String> env) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model_name", model);
        body.put("model_version", "1");
        body.put("input_type", "floats");
        body.put("num_replicas", 1);
        body.put("command", command);
        body.put("env", env);
        return body;
    }

    private void awaitReady(int port, String model) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        JsonNode deployments = null;
        while (System.nanoTime() < until) {
            // a gateway without a token ignores the header
            deployments = json.readTree(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/admin/get_deployments")).header("Authorization", "Bearer " + TOKEN).GET().build(),
                    HttpResponse.BodyHandlers.ofString()).body());
            for (JsonNode d : deployments) {
                if (d.get("model_name").asString().equals(model) && d.get("ready_replicas").intValue() == 1) {
                    return;
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no ready replica of " + model + ": " + deployments);
    }

    private JsonNode post(int port, String endpoint, Object body, String token, int status) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/admin/"
                + endpoint)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json.writeValueAsString(body)));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("%s -> %s", endpoint, response.body()).isEqualTo(status);
        JsonNode node = json.readTree(response.body());
        if (status >= 400) {
            assertThat(node.has("error") && node.has("cause")).as("error body %s", response.body()).isTrue();
        }
        return node;
    }
}
