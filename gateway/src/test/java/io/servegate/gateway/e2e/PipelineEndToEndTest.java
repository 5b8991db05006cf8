package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.containers.onnx.Device;
import io.servegate.containers.onnx.FashionMnist;
import io.servegate.containers.onnx.OnnxPredictor;
import io.servegate.containers.onnx.OutputMode;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.GatewayCalls;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.net.http.HttpResponse;
import java.nio.file.Path;
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
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * Pipeline apps through the gateway with real containers over loopback gRPC: the Fashion-MNIST
 * logistic regression answering raw logits, the CNN answering labels, and a slow container
 * (300 ms a batch). A Fashion-MNIST cascade answers exactly as its two models' own answers and
 * the routing rule say, asking the CNN only about the images the first model is unsure of; a
 * stage that misses its deadline gives the default naming it; a bad graph gets a 4xx naming
 * the problem.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"servegate.admin.port=0", "servegate.limits.max-body-size=256KB"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PipelineEndToEndTest {

    private static final Path MODELS = Path.of("../containers/onnx/models");
    private static final double THRESHOLD = 0.9;
    // names of their own: other test classes share this Spring context, and with it the registry
    private static final String LOGREG = "pipe-logreg";
    private static final String CNN = "pipe-cnn";
    private static final String SLOW = "pipe-slow";

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    private final List<AutoCloseable> closing = new ArrayList<>();
    private final AtomicInteger cnnInputs = new AtomicInteger();
    private OnnxPredictor logreg;
    private OnnxPredictor cnn;
    private GatewayCalls calls;
    private List<float[]> images;

    @BeforeAll
    void startContainersAndRegister() throws Exception {
        logreg = new OnnxPredictor(MODELS.resolve("fmnist-logreg.onnx"), Device.CPU, 0, OutputMode.RAW, 1);
        cnn = new OnnxPredictor(MODELS.resolve("fmnist-cnn.onnx"));
        closing.add(logreg);
        closing.add(cnn);
        images = FashionMnist.testSet().images().subList(0, 64);
        calls = new GatewayCalls(queryPort, adminServer.port(), json);

        register(LOGREG, ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS,
                (List<float[]> batch) -> logreg.predictBatch(batch)));
        register(CNN, ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS, (List<float[]> batch) -> {
            cnnInputs.addAndGet(batch.size());
            return cnn.predictBatch(batch);
        }));
        register(SLOW, ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS, (List<float[]> batch) -> {
            Thread.sleep(300);
            return batch.stream().map(x -> "late").toList();
        }));
        calls.admin("add_app", Map.of("name", "pipe-plain", "input_type", "floats", "default_output", "-1",
                "latency_slo_micros", 1_000_000));
    }

    private void register(String model, ModelContainer.Builder<float[], String> builder) throws Exception {
        ModelContainer<float[], String> c = builder.name(model).version("1").host("127.0.0.1").port(0)
                .inputLength(784).build().start();
        closing.add(c);
        calls.admin("add_model", Map.of("model_name", model, "model_version", "1", "input_type", "floats",
                "batch_size", -1));
        calls.admin("add_container", Map.of("model_name", model, "model_version", "1",
                "address", "127.0.0.1:" + c.port()));
        calls.awaitReady(model);
    }

    @AfterAll
    void stop() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    private static String cascade(String name, long sloMicros, String second) {
        return """
                {"name": "%s", "input_type": "floats", "default_output": "-1", "latency_slo_micros": %d,
                 "stages": [{"name": "fast", "model": "pipe-logreg", "output": "logits"},
                            {"name": "accurate", "model": "%s"}],
                 "edges": [{"from": "fast", "to": "accurate", "when": {"confidence_below": %s}}]}
                """.formatted(name, sloMicros, second, THRESHOLD);
    }

    private JsonNode predict(String app, float[] image) throws Exception {
        return calls.predict(app, image);
    }

    @Test
    void theCascadeAnswersTheConfidentModelsLabelAndAsksTheCnnOnlyWhenUnsure() throws Exception {
        assertThat(calls.adminRaw("add_pipeline", cascade("cascade", 5_000_000, CNN)).statusCode())
                .isEqualTo(200);
        List<String> logits = logreg.predictBatch(images);
        List<String> labels = cnn.predictBatch(images);
        int unsure = 0;
        int before = cnnInputs.get();
        for (int i = 0; i < images.size(); i++) {
            double[] l = json.readValue(logits.get(i), double[].class);
            int best = 0;
            double sum = 0;
            for (int k = 1; k < l.length; k++) {
                best = l[k] > l[best] ? k : best;
            }
            for (double v : l) {
                sum += Math.exp(v - l[best]);
            }
            boolean sure = 1 / sum >= THRESHOLD;
            unsure += sure ? 0 : 1;
            JsonNode answer = predict("cascade", images.get(i));
            assertThat(answer.get("default").booleanValue()).as(answer.toString()).isFalse();
            assertThat(answer.get("output").asString()).as("image %d", i)
                    .isEqualTo(sure ? Integer.toString(best) : labels.get(i));
        }
        assertThat(unsure).as("both branches were taken").isBetween(1, images.size() - 1);
        assertThat(cnnInputs.get() - before).as("the CNN saw exactly the unsure images").isEqualTo(unsure);

        JsonNode described = json.readTree(calls.adminRaw("get_pipeline", "{\"name\": \"cascade\"}").body());
        assertThat(described.get("stages").get(0).get("output").asString()).isEqualTo("logits");
        assertThat(described.get("stage_deadlines_micros").get("accurate").longValue())
                .as("the final stage keeps the end-to-end deadline less the margin").isEqualTo(4_999_000);
        assertThat(described.get("stage_deadlines_micros").get("fast").longValue()).isBetween(1L, 4_999_000L);
        assertThat(json.readTree(calls.adminRaw("get_all_pipelines", "{}").body()).toString()).contains("cascade");
    }

    /**
     * Planned, so that the first stage's deadline is 50 ms whatever the slow model's profile: split
     * by the profiles (0.3 s against well under 1 ms) the first stage would get about 2 ms.
     */
    @Test
    void aStageThatMissesTheDeadlineGivesTheDefaultNamingIt() throws Exception {
        String slow = """
                {"name": "slowpipe", "input_type": "floats", "default_output": "-1", "latency_slo_micros": 100000,
                 "stages": [{"name": "fast", "model": "pipe-logreg", "output": "logits", "deadline_micros": 50000},
                            {"name": "laggard", "model": "pipe-slow", "deadline_micros": 50000}],
                 "edges": [{"from": "fast", "to": "laggard"}]}
                """;
        assertThat(calls.adminRaw("add_pipeline", slow).statusCode()).isEqualTo(200);
        long start = System.nanoTime();
        JsonNode answer = predict("slowpipe", images.get(0));
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        assertThat(answer.get("default").booleanValue()).isTrue();
        assertThat(answer.get("output").asInt()).isEqualTo(-1);
        assertThat(answer.get("default_explanation").asString())
                .contains("stage 'laggard' (pipe-slow:1, due 99.0 ms after arrival)");
        assertThat(tookMs).as("answered at the deadline, not after the 300 ms container").isLessThan(290);
    }

    @Test
    void aBadGraphGetsA4xxNamingTheProblem() throws Exception {
        expect(calls.adminRaw("add_pipeline", """
                {"name": "loop", "input_type": "floats", "default_output": "-1", "latency_slo_micros": 100000,
                 "stages": [{"name": "a", "model": "pipe-logreg"}, {"name": "b", "model": "pipe-cnn"},
                            {"name": "c", "model": "pipe-cnn"}],
                 "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "a"}, {"from": "b", "to": "c"}]}
                """), 400, "the edges form a cycle: a -> b -> a");
        expect(calls.adminRaw("add_pipeline", cascade("ghostly", 100_000, "no-such-model")), 404,
                "model 'no-such-model' not found");
        expect(calls.adminRaw("add_pipeline", cascade("pipe-plain", 100_000, CNN)), 409,
                "an app named 'pipe-plain' exists");
        expect(calls.adminRaw("add_pipeline", """
                {"name": "typed", "input_type": "floats", "default_output": "-1", "latency_slo_micros": 100000,
                 "stages": [{"name": "a", "model": "pipe-logreg"},
                            {"name": "b", "model": "pipe-cnn", "input": "previous"}],
                 "edges": [{"from": "a", "to": "b"}]}
                """), 400, "stage 'b' takes the output of 'a', which answers 'label' and can feed no model");
        expect(calls.adminRaw("add_pipeline", """
                {"name": "ints", "input_type": "ints", "default_output": "-1", "latency_slo_micros": 100000,
                 "stages": [{"name": "a", "model": "pipe-logreg"}]}
                """), 400, "model 'pipe-logreg' takes 'floats' but pipeline 'ints' gives it 'ints'");
        expect(calls.adminRaw("add_pipeline", """
                {"name": "typo", "input_type": "floats", "default_output": "-1", "latency_slo_micros": 100000,
                 "stages": [{"name": "a", "model": "pipe-logreg", "outptu": "logits"}]}
                """), 400, "unknown field 'stages[0].outptu'");
        expect(calls.adminRaw("add_pipeline", """
                {"name": "vip", "input_type": "floats", "default_output": "-1", "latency_slo_micros": 100000,
                 "priority": "urgent", "stages": [{"name": "a", "model": "pipe-logreg"}]}
                """), 400, "unknown priority 'urgent': expected one of critical, standard, sheddable");
        expect(calls.adminRaw("add_pipeline", """
                {"name": "vip", "input_type": "floats", "default_output": "-1", "latency_slo_micros": 100000,
                 "weight": 0, "stages": [{"name": "a", "model": "pipe-logreg"}]}
                """), 400, "'weight' must be an integer in 1..");
        expect(calls.adminRaw("get_pipeline", "{\"name\": \"loop\"}"), 404, "unknown pipeline 'loop'");
    }

    private void expect(HttpResponse<String> response, int status, String causeFragment) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        JsonNode body = json.readTree(response.body());
        assertThat(body.get("cause").asString()).as(response.body()).contains(causeFragment);
    }
}
