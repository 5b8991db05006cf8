package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.servegate.containers.onnx.FashionMnist;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.oip.ModelMetadataResponse;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.InferResult;
import io.servegate.oip.client.TensorType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
 * A Java model container and a Python one behind one app: the ONNX container (fmnist-cnn, a
 * separate JVM) and the scikit-learn container (containers/sklearn/serve.py on Debian's
 * /usr/bin/python3, built on the Python SDK), both real child processes on loopback ports,
 * registered through the admin API and linked to an exp4 app. The Python container must answer
 * the very OIP requests the Java one answers, and the app's answers must be the exp4 vote of the
 * two containers' own answers.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"servegate.admin.port=0", "servegate.limits.max-body-size=1MB"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MixedLanguageEndToEndTest {

    private static final String CNN = "fmnist-cnn";
    private static final String SKLEARN = "fmnist-sklearn";
    private static final Path CNN_MODEL = Path.of("../containers/onnx/models/fmnist-cnn.onnx").toAbsolutePath();
    private static final Path SKLEARN_SERVE = Path.of("../containers/sklearn/serve.py").toAbsolutePath();
    private static final int IMAGES = 200;

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    private Path argfile;
    private ContainerProcess java;
    private ContainerProcess python;
    private ContainerClient toJava;
    private ContainerClient toPython;
    private WebTestClient query;
    private WebTestClient admin;
    private FashionMnist data;
    private List<float[]> images;
    private List<String> linked;

    @BeforeAll
    void startBothContainersAndRegister() throws Exception {
        // ONNX Runtime crashes on command lines over a few KiB, so the classpath goes in an @argfile
        argfile = Files.createTempFile("onnx-container-", ".args");
        Files.writeString(argfile, "-Xmx256m -cp \"" + System.getProperty("java.class.path").replace("\\", "\\\\")
                + "\" io.servegate.containers.onnx.OnnxContainer\n");
        java = ContainerProcess.start(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "@" + argfile, "--name", CNN, "--model", CNN_MODEL.toString(), "--host", "127.0.0.1", "--port", "0"),
                Map.of());
        python = ContainerProcess.start(List.of("/usr/bin/python3", SKLEARN_SERVE.toString()),
                Map.of("MODEL_NAME", SKLEARN, "MODEL_VERSION", "1", "HOST", "127.0.0.1", "PORT", "0"));
        toJava = ContainerClient.connect(java.address(), 16 << 20);
        toPython = ContainerClient.connect(python.address(), 16 << 20);
        data = FashionMnist.testSet();
        images = data.images().subList(0, IMAGES);

        query = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + queryPort)
                .responseTimeout(Duration.ofSeconds(30)).build();
        admin = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + adminServer.port())
                .responseTimeout(Duration.ofSeconds(30)).build();
        adminOk("add_app", Map.of("name", "mixed", "input_type", "floats", "default_output", "-1",
                "latency_slo_micros", 10_000_000, "selection_policy", "exp4"));
        adminOk("add_app", Map.of("name", "py", "input_type", "floats", "default_output", "-1",
                "latency_slo_micros", 10_000_000));
        for (var m : Map.of(CNN, java, SKLEARN, python).entrySet()) {
            adminOk("add_model", Map.of("model_name", m.getKey(), "model_version", "1", "input_type", "floats"));
            adminOk("add_container", Map.of("model_name", m.getKey(), "model_version", "1",
                    "address", m.getValue().address()));
        }
        adminOk("add_model_links", Map.of("app_name", "mixed", "model_names", List.of(CNN, SKLEARN)));
        adminOk("add_model_links", Map.of("app_name", "py", "model_names", List.of(SKLEARN)));
        for (String m : List.of(CNN, SKLEARN)) {
            long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (query.get().uri("/v2/models/" + m + "/ready").exchange().returnResult(String.class)
                    .getStatus().value() != 200) {
                assertThat(System.nanoTime()).as("%s became ready", m).isLessThan(until);
                Thread.sleep(50);
            }
        }
        linked = new ArrayList<>();
        post(admin, "/admin/get_linked_models", Map.of("app_name", "mixed")).forEach(n -> linked.add(n.asString()));
        assertThat(linked).containsExactlyInAnyOrder(CNN, SKLEARN);
    }

    /** Closes what {@link #startBothContainersAndRegister} got to start: no container outlives the test. */
    @AfterAll
    void stop() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {toJava, toPython, java, python}) {
            if (c != null) {
                c.close();
            }
        }
        Files.deleteIfExists(argfile);
    }

    @Test
    void thePythonContainerAnswersTheSameOipRequestsAsTheJavaOne() throws Exception {
        ModelMetadataResponse jm = toJava.modelMetadata(CNN, "1", Duration.ofSeconds(10)).get();
        ModelMetadataResponse pm = toPython.modelMetadata(SKLEARN, "1", Duration.ofSeconds(10)).get();
        for (ModelMetadataResponse m : List.of(jm, pm)) {
            assertThat(m.getInputs(0).getDatatype()).isEqualTo("FP32");
            assertThat(m.getInputs(0).getShapeList()).containsExactly(-1L, 784L);
            assertThat(m.getOutputs(0).getName()).isEqualTo("output");
            assertThat(m.getOutputs(0).getDatatype()).isEqualTo("BYTES");
        }
        assertThat(pm.getPlatform()).isEqualTo("servegate-python");
        assertThat(toPython.serverReady(Duration.ofSeconds(5)).get()).isTrue();
        assertThat(toPython.modelReady(SKLEARN, "1", Duration.ofSeconds(5)).get()).isTrue();

        // the same typed call (same request bytes but the model name), both as the gateway makes it
        InferResult<String> j = toJava.infer(CNN, "1", TensorType.FLOATS, images, TensorType.STRINGS,
                Duration.ofSeconds(30)).get();
        InferResult<String> p = toPython.infer(SKLEARN, "1", TensorType.FLOATS, images, TensorType.STRINGS,
                Duration.ofSeconds(30)).get();
        assertThat(p.modelName()).isEqualTo(SKLEARN);
        assertThat(p.modelVersion()).isEqualTo("1");
        assertThat(p.serviceTimeNanos()).as("servegate_service_time_ns").isPositive();
        assertThat(p.outputs()).hasSize(IMAGES).allMatch(label -> label.matches("[0-9]"));
        assertThat(accuracy(j.outputs())).as("cnn accuracy").isGreaterThan(0.85);
        assertThat(accuracy(p.outputs())).as("sklearn accuracy").isGreaterThan(0.80);
        long agree = 0;
        for (int i = 0; i < IMAGES; i++) {
            agree += j.outputs().get(i).equals(p.outputs().get(i)) ? 1 : 0;
        }
        assertThat(agree).as("two real classifiers mostly agree").isGreaterThan(IMAGES * 3L / 4);

        // and refuses what the Java container refuses
        assertThat(toPython.infer(SKLEARN, "2", TensorType.FLOATS, images.subList(0, 1), TensorType.STRINGS,
                Duration.ofSeconds(10))).failsWithin(Duration.ofSeconds(10)).withThrowableThat()
                .withMessageContaining("NOT_FOUND");
        assertThat(toPython.infer(SKLEARN, "1", TensorType.FLOATS, List.of(new float[10]), TensorType.STRINGS,
                Duration.ofSeconds(10))).failsWithin(Duration.ofSeconds(10)).withThrowableThat()
                .withMessageContaining("INVALID_ARGUMENT").withMessageContaining("the model expects 784");
    }

    @Test
    void theMixedAppAnswersTheExp4VoteOfTheJavaAndPythonContainers() throws Exception {
        List<String> cnn = toJava.infer(CNN, "1", TensorType.FLOATS, images, TensorType.STRINGS,
                Duration.ofSeconds(30)).get().outputs();
        List<String> sk = toPython.infer(SKLEARN, "1", TensorType.FLOATS, images, TensorType.STRINGS,
                Duration.ofSeconds(30)).get().outputs();
        // single queries: a few where the two agree and a few where they split
        List<Integer> picked = new ArrayList<>();
        for (int i = 0; i < IMAGES && picked.size() < 12; i++) {
            boolean split = !cnn.get(i).equals(sk.get(i));
            long splits = picked.stream().filter(k -> !cnn.get(k).equals(sk.get(k))).count();
            if (split ? splits < 4 : picked.size() - splits < 8) {
                picked.add(i);
            }
        }
        assertThat(picked.stream().filter(k -> !cnn.get(k).equals(sk.get(k)))).as("disagreements seen").isNotEmpty();
        for (int i : picked) {
            JsonNode answer = post(query, "/mixed/predict", Map.of("input", images.get(i)));
            assertVote(answer, cnn.get(i), sk.get(i), i);
        }
        // and as a batch through one request
        JsonNode batch = post(query, "/mixed/predict", Map.of("input_batch", images.subList(100, 150)))
                .get("batch_predictions");
        assertThat(batch).hasSize(50);
        for (int k = 0; k < 50; k++) {
            assertVote(batch.get(k), cnn.get(100 + k), sk.get(100 + k), 100 + k);
        }
    }

    @Test
    void anAppOfThePythonModelAloneAnswersWhatItsContainerAnswers() throws Exception {
        List<float[]> rows = images.subList(150, 190);
        List<String> expected = toPython.infer(SKLEARN, "1", TensorType.FLOATS, rows, TensorType.STRINGS,
                Duration.ofSeconds(30)).get().outputs();
        JsonNode batch = post(query, "/py/predict", Map.of("input_batch", rows)).get("batch_predictions");
        List<String> got = new ArrayList<>();
        batch.forEach(p -> {
            assertThat(p.get("default").booleanValue()).as("%s", p).isFalse();
            got.add(p.get("output").asString());
        });
        assertThat(got).containsExactlyElementsOf(expected);
    }

    /** Equal exp4 weights: agreement wins with confidence 1; a split goes to the first linked model with 0.5. */
    private void assertVote(JsonNode answer, String cnn, String sklearn, int image) {
        assertThat(answer.get("default").booleanValue()).as("image %d: %s", image, answer).isFalse();
        assertThat(answer.get("models_answered").intValue()).as("image %d", image).isEqualTo(2);
        String first = linked.get(0).equals(CNN) ? cnn : sklearn;
        boolean agree = cnn.equals(sklearn);
        assertThat(answer.get("output").asString()).as("image %d", image).isEqualTo(agree ? cnn : first);
        assertThat(answer.get("confidence").doubleValue()).as("image %d", image)
                .isCloseTo(agree ? 1.0 : 0.5, within(1e-9));
    }

    private double accuracy(List<String> labels) {
        int right = 0;
        for (int i = 0; i < labels.size(); i++) {
            right += Integer.parseInt(labels.get(i)) == data.label(i) ? 1 : 0;
        }
        return (double) right / labels.size();
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
}
