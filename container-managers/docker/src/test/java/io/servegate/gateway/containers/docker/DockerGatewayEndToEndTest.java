package io.servegate.gateway.containers.docker;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.DockerClient;
import io.servegate.containers.onnx.FashionMnist;
import io.servegate.containers.onnx.OnnxPredictor;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.registry.Registry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.condition.EnabledIf;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * Issue #5's Docker path through the gateway's admin API, against the real engine: deploy_model
 * with an image built FROM the local base starts 2 replicas, predictions flow through
 * {@code /{app}/predict}, set_num_replicas scales to 1 and delete_versioned_model removes the
 * containers.
 */
@EnabledIf(value = "io.servegate.gateway.containers.docker.DockerEngine#available",
        disabledReason = "no Docker engine or no local base image: run bin/docker-setup (CI does)")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "servegate.admin.port=0", "servegate.containers.manager=docker", "servegate.containers.restart-policy=on-failure",
        "servegate.containers.readiness-timeout=120s", "servegate.containers.stop-grace-period=5s",
        "servegate.containers.docker.owner=servegate-e2e-test"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerGatewayEndToEndTest {

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    Registry registry;

    @Autowired
    ObjectMapper json;

    private DockerClient docker;
    private String image;
    private WebTestClient query;
    private WebTestClient admin;

    @BeforeAll
    void buildImage() {
        docker = DockerEngine.connectOrSkip();
        image = DockerEngine.buildOnnxImage(docker);
        query = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + queryPort)
                .responseTimeout(Duration.ofSeconds(60)).build();
        admin = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + adminServer.port())
                .responseTimeout(Duration.ofSeconds(60)).build();
    }

    @AfterAll
    void close() throws Exception {
        docker.close();
    }

    @Test
    void deployPredictScaleAndDeleteThroughTheAdminApi() throws Exception {
        post(admin, "/admin/add_app", Map.of("name", "fashion", "input_type", "floats", "default_output", "-1",
                "latency_slo_micros", 10_000_000));
        JsonNode deployed = post(admin, "/admin/deploy_model", Map.of("model_name", "fmnist-cnn", "model_version", "1",
                "input_type", "floats", "image", image, "num_replicas", 2,
                "resources", Map.of("cpus", 1, "memory_bytes", 512L << 20), "env", Map.of("INTRA_OP_THREADS", "1")));
        assertThat(deployed.toString()).contains("fmnist-cnn");
        post(admin, "/admin/add_model_links", Map.of("app_name", "fashion", "model_names", List.of("fmnist-cnn")));
        await("both replicas ready and registered", () -> replicas() == 2);
        assertThat(containers()).isEqualTo(2);
        // the gateway connects to registered replicas on its own; wait until it reports the model ready
        await("the gateway sees a ready replica", () -> query.get().uri("/v2/models/fmnist-cnn/ready").exchange()
                .returnResult(String.class).getStatus().value() == 200);

        FashionMnist test = FashionMnist.testSet();
        List<float[]> images = test.images().subList(0, 32);
        List<String> expected;
        try (OnnxPredictor onnx = new OnnxPredictor(Path.of("../../containers/onnx/models/fmnist-cnn.onnx"))) {
            expected = onnx.predictBatch(images);
        }
        assertThat(predict(images)).containsExactlyElementsOf(expected);

        post(admin, "/admin/set_num_replicas", Map.of("model_name", "fmnist-cnn", "model_version", "1",
                "num_replicas", 1));
        assertThat(replicas()).isEqualTo(1);
        assertThat(containers()).isEqualTo(1);
        String deployments = admin.get().uri("/admin/get_deployments").exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        assertThat(json.readTree(deployments).get(0).toString()).contains("\"ready\"");
        assertThat(predict(images.subList(0, 8))).containsExactlyElementsOf(expected.subList(0, 8));

        post(admin, "/admin/delete_versioned_model", Map.of("model_name", "fmnist-cnn", "model_version", "1"));
        assertThat(containers()).isZero();
        assertThat(registry.snapshot().replicas()).isEmpty();
        assertThat(json.readTree(admin.get().uri("/admin/get_deployments").exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody()).size()).isZero();
    }

    private List<String> predict(List<float[]> images) {
        JsonNode batch = post(query, "/fashion/predict", Map.of("input_batch", images));
        List<String> outputs = new ArrayList<>();
        for (JsonNode p : batch.get("batch_predictions")) {
            assertThat(p.get("default").booleanValue()).as(p.toString()).isFalse();
            outputs.add(p.get("output").asString());
        }
        return outputs;
    }

    private int replicas() {
        return registry.snapshot().replicas("fmnist-cnn", "1").size();
    }

    private int containers() {
        return docker.listContainersCmd().withShowAll(true)
                .withLabelFilter(Map.of("servegate.owner", "servegate-e2e-test")).exec().size();
    }

    private JsonNode post(WebTestClient client, String uri, Object body) {
        String text = client.post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange()
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        return text == null ? json.createObjectNode() : json.readTree(text);
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(until);
            Thread.sleep(100);
        }
    }
}
