package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.containers.onnx.FashionMnist;
import io.servegate.containers.onnx.OnnxPredictor;
import io.servegate.gateway.api.AdminServer;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * The gateway and a real ONNX container (the Fashion-MNIST CNN) over loopback gRPC, set up
 * through the admin API with Clipper-format bodies. Predictions through the gateway must equal
 * the container's own answers.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"servegate.admin.port=0", "servegate.limits.max-body-size=256KB"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OnnxGatewayEndToEndTest {

    private static final Path MODEL = Path.of("../containers/onnx/models/fmnist-cnn.onnx");

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    private OnnxPredictor onnx;
    private ModelContainer<float[], String> container;
    private ContainerClient direct;
    private final AtomicInteger inputsSeen = new AtomicInteger();
    private WebTestClient query;
    private WebTestClient admin;
    private List<float[]> images;

    @BeforeAll
    void startContainerAndRegister() throws Exception {
        onnx = new OnnxPredictor(MODEL);
        container = ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS, (List<float[]> batch) -> {
            inputsSeen.addAndGet(batch.size());
            return onnx.predictBatch(batch);
        }).name("fmnist-cnn").version("1").host("127.0.0.1").port(0).inputLength(784).build().start();
        direct = ContainerClient.connect("127.0.0.1:" + container.port());
        images = FashionMnist.testSet().images().subList(0, 64);

        query = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + queryPort)
                .responseTimeout(Duration.ofSeconds(30)).build();
        admin = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + adminServer.port())
                .responseTimeout(Duration.ofSeconds(30)).build();

        adminOk("add_app", Map.of("name", "fashion", "input_type", "floats", "default_output", "-1",
                "latency_slo_micros", 5_000_000));
        adminOk("add_model", Map.of("model_name", "fmnist-cnn", "model_version", "1", "labels", List.of("cnn"),
                "input_type", "floats", "container_name", "servegate/onnx", "model_data_path", MODEL.toString(),
                "batch_size", -1));
        adminOk("add_model_links", Map.of("app_name", "fashion", "model_names", List.of("fmnist-cnn")));
        adminOk("add_container", Map.of("model_name", "fmnist-cnn", "model_version", "1",
                "address", "127.0.0.1:" + container.port()));
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (query.get().uri("/v2/models/fmnist-cnn/ready").exchange().returnResult(String.class)
                .getStatus().value() != 200) {
            assertThat(System.nanoTime()).as("container became ready").isLessThan(until);
            Thread.sleep(50);
        }
    }

    @AfterAll
    void stop() throws Exception {
        direct.close();
        container.close();
        onnx.close();
    }

    @Test
    void singleAndBatchPredictionsEqualTheContainersOwnAnswers() throws Exception {
        List<String> expected = direct.infer("fmnist-cnn", "1", TensorType.FLOATS, images.subList(0, 16),
                TensorType.STRINGS, Duration.ofSeconds(10)).get().outputs();

        JsonNode single = post(query, "/fashion/predict", Map.of("input", images.get(0)));
        assertThat(single.get("default").booleanValue()).isFalse();
        assertThat(single.get("output").asString()).isEqualTo(expected.get(0));
        assertThat(single.has("query_id")).isTrue();

        JsonNode batch = post(query, "/fashion/predict", Map.of("input_batch", images.subList(0, 16)));
        List<String> outputs = new ArrayList<>();
        for (JsonNode p : batch.get("batch_predictions")) {
            assertThat(p.get("default").booleanValue()).isFalse();
            outputs.add(p.get("output").asString());
        }
        assertThat(outputs).containsExactlyElementsOf(expected);
    }

    @Test
    void oipRestInferEqualsTheContainersOwnAnswers() throws Exception {
        List<float[]> rows = images.subList(16, 24);
        List<String> expected = direct.infer("fmnist-cnn", "", TensorType.FLOATS, rows, TensorType.STRINGS,
                Duration.ofSeconds(10)).get().outputs();
        List<Float> flat = new ArrayList<>();
        rows.forEach(r -> {
            for (float f : r) {
                flat.add(f);
            }
        });
        JsonNode response = post(query, "/v2/models/fmnist-cnn/versions/1/infer", Map.of("id", "r1", "inputs",
                List.of(Map.of("name", "input", "datatype", "FP32", "shape", List.of(8, 784), "data", flat))));
        assertThat(response.get("id").asString()).isEqualTo("r1");
        JsonNode out = response.get("outputs").get(0);
        assertThat(out.get("shape").get(0).intValue()).isEqualTo(8);
        List<String> got = new ArrayList<>();
        out.get("data").forEach(n -> got.add(n.asString()));
        assertThat(got).containsExactlyElementsOf(expected);

        JsonNode md = get("/v2/models/fmnist-cnn");
        assertThat(md.get("versions").get(0).asString()).isEqualTo("1");
        assertThat(md.get("inputs").get(0).get("datatype").asString()).isEqualTo("FP32");
        assertThat(get("/v2/health/ready").get("ready").booleanValue()).isTrue();
    }

    @Test
    void aRepeatedInputIsAnsweredFromTheCache() {
        float[] image = images.get(40);
        JsonNode first = post(query, "/fashion/predict", Map.of("input", image));
        int seen = inputsSeen.get();
        JsonNode second = post(query, "/fashion/predict", Map.of("input", image));
        assertThat(second.get("output")).isEqualTo(first.get("output"));
        assertThat(inputsSeen.get()).as("the container saw no new input").isEqualTo(seen);
        String metrics = query.get().uri("/metrics").accept(MediaType.TEXT_PLAIN).exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        assertThat(metrics).contains("servegate_cache_requests_total{result=\"hit\"}");
    }

    @Test
    void badInputGetsA4xxJsonErrorNamingTheProblem() {
        expectError(query.post().uri("/fashion/predict").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"input\": [1, 2"), 400, "malformed JSON");
        expectError(query.post().uri("/nosuchapp/predict").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("input", images.get(0))), 404, "unknown application 'nosuchapp'");
        expectError(query.post().uri("/fashion/predict").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("input", "a string")), 400, "must be a JSON array of numbers");
        expectError(query.post().uri("/fashion/predict").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("input", new float[10])), 400, "the model expects 784");
        expectError(query.post().uri("/fashion/predict").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("input", List.of(1, "x"))), 400, "'input[1]' must be a number");
        expectError(query.post().uri("/fashion/predict").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"input\": [" + "1,".repeat(150_000) + "1]}"), 413, "262144");
        expectError(query.post().uri("/fashion/predict").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("input", images.get(0), "version", "7")), 404, "has no version '7'");
        expectError(query.get().uri("/no/such/path"), 404, "");
        expectError(admin.post().uri("/admin/add_app").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("name", "../etc", "input_type", "floats", "default_output", "x",
                        "latency_slo_micros", 1000)), 400, "app");
        expectError(admin.post().uri("/admin/add_app").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("name", "fashion", "input_type", "floats", "default_output", "x",
                        "latency_slo_micros", 1000)), 409, "fashion");
        expectError(admin.post().uri("/admin/add_model").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model_name", "m", "model_version", "1", "input_type", "tensors")), 400,
                "unknown input type 'tensors'");
        expectError(admin.post().uri("/admin/add_container").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model_name", "fmnist-cnn", "model_version", "1", "address", "evil:99999")), 400,
                "port");
        // and the app still answers
        assertThat(post(query, "/fashion/predict", Map.of("input", images.get(1))).get("default").booleanValue())
                .isFalse();
    }

    @Test
    void adminReadsFollowClipper() {
        JsonNode app = post(admin, "/admin/get_application", Map.of("name", "fashion"));
        assertThat(app.get("latency_slo_micros").longValue()).isEqualTo(5_000_000L);
        assertThat(post(admin, "/admin/get_linked_models", Map.of("app_name", "fashion")).get(0).asString())
                .isEqualTo("fmnist-cnn");
        assertThat(post(admin, "/admin/get_all_models", Map.of()).get(0).asString()).isEqualTo("fmnist-cnn:1");
        JsonNode containers = post(admin, "/admin/get_all_containers", Map.of());
        assertThat(containers.get(0).get("available").booleanValue()).isTrue();
        admin.get().uri("/admin/ping").exchange().expectStatus().isOk();
    }

    private void adminOk(String endpoint, Map<String, ?> body) {
        admin.post().uri("/admin/" + endpoint).contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectStatus().isOk();
    }

    private JsonNode post(WebTestClient client, String uri, Object body) {
        String text = client.post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange()
                .expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        return json.readTree(text);
    }

    private JsonNode get(String uri) {
        return json.readTree(query.get().uri(uri).exchange().expectStatus().isOk().expectBody(String.class)
                .returnResult().getResponseBody());
    }

    private void expectError(WebTestClient.RequestHeadersSpec<?> request, int status, String causeFragment) {
        String text = request.exchange().expectStatus().isEqualTo(status).expectBody(String.class).returnResult()
                .getResponseBody();
        JsonNode body = json.readTree(text);
        assertThat(body.has("error")).as(text).isTrue();
        assertThat(body.get("cause").asString()).as(text).contains(causeFragment);
    }
}
