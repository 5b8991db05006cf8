package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.servegate.containers.emulated.EmulatedPredictor;
import io.servegate.containers.onnx.FashionMnist;
import io.servegate.containers.onnx.OnnxPredictor;
import io.servegate.gateway.api.AdminServer;
import io.servegate.core.selection.Exp3Policy;
import io.servegate.core.selection.Exp4Policy;
import io.servegate.core.selection.Task;
import io.servegate.gateway.selection.RedisSelectionStateStore;
import io.servegate.gateway.selection.SelectionStateStore;
import io.servegate.core.selection.Versioned;
import io.servegate.core.selection.WeightedState;
import io.servegate.gateway.testsupport.RedisServer;
import io.servegate.oip.client.ContainerClient;
import io.servegate.sdk.ModelContainer;
import io.servegate.oip.client.TensorType;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * The model selection layer end to end (Clipper §5): three real ONNX Fashion-MNIST classifiers
 * (cnn 92%, logreg 83%, tiny 71%) in-process on loopback gRPC, registered through the admin API,
 * with the selection states in a real {@code redis-server} of this class's own (it is stopped by
 * the last test).
 *
 * <p>Apps: {@code ens} (exp4 over the three), {@code bandit} (exp3 over the three), {@code single}
 * (the default policy, cnn), {@code unanimous} (exp4 with confidence threshold 1.0) and
 * {@code straggle} (exp4 over the three plus an emulated model that takes 1.5 s, SLO 300 ms).
 * Every expected answer is computed from the containers' own outputs, queried directly.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0",
    "servegate.selection.store=redis",
    "servegate.selection.key-prefix=sg-sel-e2e",
    "servegate.selection.max-states-per-app=1000",
    // generous: a state read slower than this would silently fall back to the last known state
    "servegate.selection.state-read-timeout=500ms"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SelectionEndToEndTest {

    private static final Path MODELS = Path.of("../containers/onnx/models");
    private static final String CNN = "fmnist-cnn";
    private static final String LOGREG = "fmnist-logreg";
    private static final String TINY = "fmnist-tiny";
    private static final String SLOW = "slow-emu";
    private static final List<String> ONNX_MODELS = List.of(CNN, LOGREG, TINY);
    private static final long SLO = 2_000_000;
    private static final double ETA = 0.1;
    /** Images 0..FEEDBACK-1 get feedback; FEEDBACK..IMAGES-1 are held out. */
    private static final int FEEDBACK = 300;
    private static final int IMAGES = 1000;
    private static final String PREFIX = "sg-sel-e2e";

    /** This class's own server: the last test stops it. */
    private static RedisServer redis;

    @DynamicPropertySource
    static void selectionRedis(DynamicPropertyRegistry registry) {
        if (redis == null) {
            redis = RedisServer.start();
        }
        registry.add("servegate.selection.redis-uri", redis::uri);
    }

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    @Autowired
    SelectionStateStore store;

    private final Map<String, OnnxPredictor> onnx = new LinkedHashMap<>();
    private final List<ModelContainer<float[], String>> containers = new ArrayList<>();
    private final AtomicInteger slowInputs = new AtomicInteger();
    /** Inputs the three ONNX containers were asked to predict. */
    private final AtomicInteger onnxInputs = new AtomicInteger();
    private WebTestClient query;
    private WebTestClient admin;
    private FashionMnist data;
    private List<float[]> images;
    /** model → its container's own answer for images 0..IMAGES-1. */
    private final Map<String, List<String>> answers = new HashMap<>();
    private List<String> linked;

    @BeforeAll
    void startContainersAndRegister() throws Exception {
        data = FashionMnist.testSet();
        images = data.images().subList(0, IMAGES);
        query = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + queryPort)
                .responseTimeout(Duration.ofSeconds(30)).build();
        admin = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + adminServer.port())
                .responseTimeout(Duration.ofSeconds(30)).build();

        for (String m : ONNX_MODELS) {
            OnnxPredictor p = new OnnxPredictor(MODELS.resolve(m + ".onnx"));
            onnx.put(m, p);
            ModelContainer<float[], String> c = ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS,
                    (List<float[]> batch) -> {
                        onnxInputs.addAndGet(batch.size());
                        return p.predictBatch(batch);
                    }).name(m).version("1").host("127.0.0.1").port(0).inputLength(784).build().start();
            containers.add(c);
            try (ContainerClient direct = ContainerClient.connect("127.0.0.1:" + c.port(), 64 << 20)) {
                List<String> out = new ArrayList<>();
                for (int from = 0; from < IMAGES; from += 250) {
                    out.addAll(direct.infer(m, "1", TensorType.FLOATS, images.subList(from, from + 250),
                            TensorType.STRINGS, Duration.ofSeconds(30)).get().outputs());
                }
                answers.put(m, out);
            }
            adminOk("add_model", Map.of("model_name", m, "model_version", "1", "input_type", "floats"));
            adminOk("add_container", Map.of("model_name", m, "model_version", "1",
                    "address", "127.0.0.1:" + c.port()));
        }
        EmulatedPredictor<float[]> emulated = new EmulatedPredictor<>(1500, 0, 10);
        ModelContainer<float[], String> slow = ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS,
                (List<float[]> batch) -> {
                    slowInputs.addAndGet(batch.size());
                    return emulated.predictBatch(batch);
                }).name(SLOW).version("1").host("127.0.0.1").port(0).inputLength(784).build().start();
        containers.add(slow);
        adminOk("add_model", Map.of("model_name", SLOW, "model_version", "1", "input_type", "floats"));
        adminOk("add_container", Map.of("model_name", SLOW, "model_version", "1",
                "address", "127.0.0.1:" + slow.port()));

        addApp("ens", "exp4", Map.of("eta", ETA), null, SLO, ONNX_MODELS);
        addApp("bandit", "exp3", Map.of("eta", ETA), null, SLO, ONNX_MODELS);
        addApp("single", null, null, null, SLO, List.of(CNN));
        addApp("unanimous", "exp4", null, 1.0, SLO, ONNX_MODELS);
        addApp("straggle", "exp4", null, null, 300_000, List.of(CNN, LOGREG, TINY, SLOW));

        for (String m : List.of(CNN, LOGREG, TINY, SLOW)) {
            long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (query.get().uri("/v2/models/" + m + "/ready").exchange().returnResult(String.class)
                    .getStatus().value() != 200) {
                assertThat(System.nanoTime()).as(m + " became ready").isLessThan(until);
                Thread.sleep(50);
            }
        }
        linked = new ArrayList<>();
        post(admin, "/admin/get_linked_models", Map.of("app_name", "ens")).forEach(n -> linked.add(n.asString()));
        assertThat(linked).containsExactlyInAnyOrderElementsOf(ONNX_MODELS);
        assertThat(store).isInstanceOf(RedisSelectionStateStore.class);
    }

    @AfterAll
    void stop() throws Exception {
        for (ModelContainer<float[], String> c : containers) {
            c.close();
        }
        for (OnnxPredictor p : onnx.values()) {
            p.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    // ------------------------------------------------------------------------------------------

    @Test
    @Order(1)
    void exp4AnswersTheEqualWeightVoteOfAllThreeContainers() {
        double[] equal = {1, 1, 1};
        // one by one, including images where the models split 2-1 against the cnn and 1-1-1
        List<Integer> picked = new ArrayList<>(List.of(0, 1, 2, 3));
        picked.add(first(i -> cnnOutvoted(i), FEEDBACK, IMAGES));
        picked.add(first(i -> distinctAnswers(i) == 3, FEEDBACK, IMAGES));
        for (int i : picked) {
            JsonNode p = post(query, "/ens/predict", Map.of("input", images.get(i)));
            Vote expected = vote(linked, equal, outputsOf(i, linked));
            assertThat(p.get("default").booleanValue()).as("image %d: %s", i, p).isFalse();
            assertThat(p.get("output").asString()).as("image %d", i).isEqualTo(expected.label());
            assertThat(p.get("models_selected").intValue()).isEqualTo(3);
            assertThat(p.get("models_answered").intValue()).isEqualTo(3);
            double confidence = p.get("confidence").doubleValue();
            assertThat(confidence).isGreaterThan(0).isLessThanOrEqualTo(1);
            assertThat(confidence).as("share of the models agreeing").isCloseTo(expected.confidence(), within(1e-9));
        }
        // and as a batch
        List<float[]> batch = images.subList(FEEDBACK, FEEDBACK + 50);
        JsonNode out = post(query, "/ens/predict", Map.of("input_batch", batch)).get("batch_predictions");
        assertThat(out).hasSize(50);
        for (int k = 0; k < 50; k++) {
            int i = FEEDBACK + k;
            Vote expected = vote(linked, equal, outputsOf(i, linked));
            assertThat(out.get(k).get("output").asString()).as("image %d", i).isEqualTo(expected.label());
            assertThat(out.get(k).get("models_answered").intValue()).isEqualTo(3);
            assertThat(out.get(k).get("confidence").doubleValue()).isCloseTo(expected.confidence(), within(1e-9));
        }
    }

    @Test
    @Order(2)
    void theDefaultPolicyIsTheSingleLinkedModelAndLearnsNothing() {
        for (int i = 0; i < 5; i++) {
            JsonNode p = post(query, "/single/predict", Map.of("input", images.get(i)));
            assertThat(p.get("output").asString()).isEqualTo(answers.get(CNN).get(i));
            assertThat(p.get("default").booleanValue()).isFalse();
            assertThat(p.has("confidence")).as("no ensemble fields for a single model: %s", p).isFalse();
            assertThat(p.has("models_selected")).isFalse();
        }
        JsonNode u = post(query, "/single/update", Map.of("input", images.get(0), "label", data.label(0)));
        assertThat(u.get("observed").booleanValue()).isFalse();
        assertThat(store.get("single/single", null).blockOptional(Duration.ofSeconds(5))).isEmpty();
    }

    @Test
    @Order(3)
    void exp3QueriesOneModelAtRandomAndCountsItsFeedback() {
        int split = first(i -> distinctAnswers(i) == 3, 0, IMAGES);
        Set<String> possible = Set.copyOf(outputsOf(split, ONNX_MODELS).values());
        Set<String> seen = new HashSet<>();
        for (int k = 0; k < 60; k++) {
            JsonNode p = post(query, "/bandit/predict", Map.of("input", images.get(split)));
            assertThat(p.get("default").booleanValue()).as("%s", p).isFalse();
            assertThat(p.get("models_selected").intValue()).isEqualTo(1);
            assertThat(p.get("models_answered").intValue()).isEqualTo(1);
            assertThat(p.get("confidence").doubleValue()).isEqualTo(1.0);
            assertThat(possible).contains(p.get("output").asString());
            seen.add(p.get("output").asString());
        }
        // each model has probability 1/3 initially: 60 draws of the same one would be (1/3)^59
        assertThat(seen).as("different models were drawn").hasSizeGreaterThan(1);

        for (int i = 0; i < FEEDBACK; i++) {
            JsonNode u = post(query, "/bandit/update", Map.of("input", images.get(i), "label", data.label(i)));
            assertThat(u.get("app").asString()).isEqualTo("bandit");
            assertThat(u.get("observed").booleanValue()).isTrue();
            assertThat(u.get("observations").longValue()).isEqualTo(i + 1);
        }
        WeightedState s = new Exp3Policy().codec().decode(state("bandit", null).state());
        assertThat(s.observations()).isEqualTo(FEEDBACK);
        assertThat(s.models()).containsExactlyElementsOf(linked);
        // The bandit's updates are noisy (one model per feedback, importance-weighted by 1/p_i up
        // to K/γ = 60), so which of cnn and logreg leads varies from run to run; but on these 300
        // images (cnn wrong on 21, logreg 43, tiny 81) the tiny model ended up the favourite in
        // none of 100,000 simulated runs of the same policy (all weights start equal).
        double best = Math.max(s.weight(CNN), s.weight(LOGREG));
        assertThat(s.weight(TINY)).as("%s", s).isLessThan(best);
    }

    /**
     * Clipper §5.2.1: Exp3 feedback on an input the app predicted joins that prediction. No model
     * is asked, and the importance-weighted loss goes to the model whose answer the user got,
     * with the probability it was drawn with then, even though other feedback changed the state
     * since. Feedback on an input never predicted asks only the one model it draws.
     */
    @Test
    @Order(3)
    void exp3FeedbackJoinsThePredictionItFollowsAndAsksNoModel() throws Exception {
        addApp("played", "exp3", Map.of("eta", ETA), null, SLO, ONNX_MODELS);
        Exp3Policy policy = new Exp3Policy(ETA, Exp3Policy.DEFAULT_GAMMA, Task.CLASSIFICATION,
                Exp3Policy.DEFAULT_SCALE);
        // images no other test queries, on which the three models give three different answers
        List<Integer> fresh = new ArrayList<>();
        List<Map<String, String>> outputs = new ArrayList<>();
        for (int i = 9_000; fresh.size() < 2; i++) {
            Map<String, String> out = new HashMap<>();
            for (String m : ONNX_MODELS) {
                out.put(m, onnx.get(m).predictBatch(List.of(data.images().get(i))).get(0).trim());
            }
            if (Set.copyOf(out.values()).size() == 3) {
                fresh.add(i);
                outputs.add(out);
            }
        }
        float[] x = data.images().get(fresh.get(0));
        float[] y = data.images().get(fresh.get(1));

        JsonNode p = post(query, "/played/predict", Map.of("input", x));
        assertThat(p.get("default").booleanValue()).as("%s", p).isFalse();
        String output = p.get("output").asString().trim();
        String arm = ONNX_MODELS.stream().filter(m -> outputs.get(0).get(m).equals(output)).findFirst().orElseThrow();
        // no state was stored yet: the model was drawn from the initial one
        double drawn = policy.probability(policy.init(linked), arm);

        int asked = onnxInputs.get();
        post(query, "/played/update", Map.of("input", y, "label", labelNoneGave(outputs.get(1))));
        assertThat(onnxInputs.get() - asked).as("feedback on an input never predicted asks one model").isEqualTo(1);
        WeightedState between = playedState();
        assertThat(between.observations()).isEqualTo(1);
        assertThat(policy.probability(between, arm)).isNotEqualTo(drawn);

        asked = onnxInputs.get();
        String label = labelNoneGave(outputs.get(0));
        JsonNode u = post(query, "/played/update", Map.of("input", x, "label", label));
        assertThat(u.get("observations").longValue()).isEqualTo(2);
        assertThat(onnxInputs.get()).as("feedback on a prediction asks no model").isEqualTo(asked);
        WeightedState after = playedState();
        assertThat(after).isEqualTo(policy.observe(between, null, label, Map.of(arm, output), Map.of(arm, drawn)))
                .isNotEqualTo(policy.observe(between, null, label, Map.of(arm, output)));
        for (String m : ONNX_MODELS) {
            if (!m.equals(arm)) {
                assertThat(after.weight(m) / after.weight(arm)).as(m)
                        .isCloseTo(between.weight(m) / between.weight(arm) * Math.exp(ETA / drawn), within(1e-9));
            }
        }
    }

    private WeightedState playedState() {
        return new Exp3Policy().codec().decode(store.get("played/exp3", null).block(Duration.ofSeconds(5)).state());
    }

    private static String labelNoneGave(Map<String, String> outputs) {
        for (int l = 0; ; l++) {
            if (!outputs.containsValue(Integer.toString(l))) {
                return Integer.toString(l);
            }
        }
    }

    @Test
    @Order(4)
    void exp4FeedbackDownWeightsTheWorseModelsExactlyAsTheExp4RuleSays() {
        for (int i = 0; i < FEEDBACK; i++) {
            JsonNode u = post(query, "/ens/update", Map.of("input", images.get(i), "label", data.label(i)));
            assertThat(u.get("app").asString()).isEqualTo("ens");
            assertThat(u.get("observed").booleanValue()).isTrue();
            assertThat(u.get("observations").longValue()).isEqualTo(i + 1);
        }
        WeightedState s = new Exp4Policy().codec().decode(state("ens", null).state());
        assertThat(s.observations()).isEqualTo(FEEDBACK);
        assertThat(s.models()).containsExactlyElementsOf(linked);
        // s_i ← s_i·exp(−η·L_i) for each feedback: log s_i = −η·(mistakes of i), normalized to max 0
        Map<String, Integer> mistakes = new HashMap<>();
        for (String m : ONNX_MODELS) {
            int wrong = 0;
            for (int i = 0; i < FEEDBACK; i++) {
                wrong += answers.get(m).get(i).equals(Integer.toString(data.label(i))) ? 0 : 1;
            }
            mistakes.put(m, wrong);
        }
        int least = mistakes.values().stream().mapToInt(Integer::intValue).min().orElseThrow();
        double[] lw = s.logWeights();
        for (int k = 0; k < linked.size(); k++) {
            assertThat(lw[k]).as("log weight of %s (%s mistakes: %s)", linked.get(k), mistakes, s)
                    .isCloseTo(-ETA * (mistakes.get(linked.get(k)) - least), within(1e-6));
        }
        assertThat(s.weight(TINY)).isLessThan(s.weight(LOGREG)).isLessThan(s.weight(CNN));

        // held-out images: the gateway's answers are the vote under the learned weights, and
        // agree with the cnn more often than the equal-weight vote did
        double[] learned = s.weights();
        int agreeBefore = 0;
        int agreeAfter = 0;
        int outvotedCnnNowWins = 0;
        for (int from = FEEDBACK; from < IMAGES; from += 100) {
            JsonNode out = post(query, "/ens/predict", Map.of("input_batch", images.subList(from, from + 100)))
                    .get("batch_predictions");
            for (int k = 0; k < 100; k++) {
                int i = from + k;
                Map<String, String> outputs = outputsOf(i, linked);
                Vote expected = vote(linked, learned, outputs);
                String got = out.get(k).get("output").asString();
                assertThat(got).as("image %d", i).isEqualTo(expected.label());
                assertThat(out.get(k).get("confidence").doubleValue()).as("image %d", i)
                        .isCloseTo(expected.confidence(), within(1e-9));
                String cnn = answers.get(CNN).get(i);
                agreeBefore += vote(linked, new double[] {1, 1, 1}, outputs).label().equals(cnn) ? 1 : 0;
                agreeAfter += got.equals(cnn) ? 1 : 0;
                if (cnnOutvoted(i)) {
                    assertThat(got).as("image %d: the cnn now outweighs logreg and tiny together", i).isEqualTo(cnn);
                    outvotedCnnNowWins++;
                }
            }
        }
        assertThat(outvotedCnnNowWins).as("held-out images where the cnn was outvoted").isPositive();
        assertThat(agreeAfter).isGreaterThan(agreeBefore);
    }

    @Test
    @Order(5)
    void perUserFeedbackGoesToSeparateStatesAndLeavesTheAppWideOneAlone() {
        Versioned appWide = state("ens", null);
        for (int i = 0; i < 5; i++) {
            assertThat(post(query, "/ens/update", Map.of("uid", 1, "input", images.get(i), "label", data.label(i)))
                    .get("observations").longValue()).isEqualTo(i + 1);
        }
        for (int i = 5; i < 8; i++) {
            assertThat(post(query, "/ens/update", Map.of("uid", 2, "input", images.get(i), "label", data.label(i)))
                    .get("observations").longValue()).isEqualTo(i - 4);
        }
        Exp4Policy exp4 = new Exp4Policy();
        assertThat(exp4.codec().decode(state("ens", "uid:1").state()).observations()).isEqualTo(5);
        assertThat(exp4.codec().decode(state("ens", "uid:2").state()).observations()).isEqualTo(3);
        assertThat(state("ens", null)).as("the app-wide state is untouched").isEqualTo(appWide);

        RedisSelectionStateStore redisStore = (RedisSelectionStateStore) store;
        RedisClient client = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            assertThat(c.sync().keys(PREFIX + ":sel:ens*")).containsExactlyInAnyOrder(
                    redisStore.key("ens/exp4", null), redisStore.key("ens/exp4", "uid:1"),
                    redisStore.key("ens/exp4", "uid:2"));
        } finally {
            client.shutdown();
        }

        // predictions read the query's own context: a user without feedback gets the initial
        // (equal) weights, so the majority against the cnn wins there, while app-wide the cnn wins
        int i = first(k -> cnnOutvoted(k), FEEDBACK, IMAGES);
        String majority = vote(linked, new double[] {1, 1, 1}, outputsOf(i, linked)).label();
        assertThat(majority).isNotEqualTo(answers.get(CNN).get(i));
        assertThat(post(query, "/ens/predict", Map.of("input", images.get(i))).get("output").asString())
                .isEqualTo(answers.get(CNN).get(i));
        assertThat(post(query, "/ens/predict", Map.of("uid", 3, "input", images.get(i))).get("output").asString())
                .isEqualTo(majority);
        assertThat(post(query, "/ens/predict", Map.of("context", "tenant-a", "input", images.get(i)))
                .get("output").asString()).isEqualTo(majority);
        assertThat(store.get("ens/exp4", "uid:3").blockOptional(Duration.ofSeconds(5))).as("reads create nothing")
                .isEmpty();
    }

    @Test
    @Order(6)
    void aConfidenceThresholdOfOneAnswersTheDefaultUnlessTheModelsAreUnanimous() {
        int split = first(i -> distinctAnswers(i) > 1, 0, IMAGES);
        JsonNode p = post(query, "/unanimous/predict", Map.of("input", images.get(split)));
        assertThat(p.get("default").booleanValue()).as("%s", p).isTrue();
        assertThat(p.get("output").asString()).isEqualTo("-1");
        assertThat(p.get("default_explanation").asString()).contains("confidence");
        assertThat(p.get("confidence").doubleValue()).isLessThan(1.0);
        assertThat(p.get("models_answered").intValue()).isEqualTo(3);

        int agreed = first(i -> distinctAnswers(i) == 1, 0, IMAGES);
        p = post(query, "/unanimous/predict", Map.of("input", images.get(agreed)));
        assertThat(p.get("default").booleanValue()).as("%s", p).isFalse();
        assertThat(p.get("output").asString()).isEqualTo(answers.get(CNN).get(agreed));
        assertThat(p.get("confidence").doubleValue()).isEqualTo(1.0);
    }

    @Test
    @Order(7)
    void aStragglerNeverDelaysTheAnswer() {
        // cached inputs: the three ONNX models answer at once, only the straggler is missing
        for (int i = 0; i < 3; i++) {
            long start = System.nanoTime();
            JsonNode p = post(query, "/straggle/predict", Map.of("input", images.get(i)));
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertThat(millis).as("answered well before the straggler's 1.5 s: %s", p).isLessThan(1200);
            assertThat(p.get("default").booleanValue()).as("%s", p).isFalse();
            assertThat(p.get("models_selected").intValue()).isEqualTo(4);
            assertThat(p.get("models_answered").intValue()).isEqualTo(3);
            Vote expected = vote(linked, new double[] {1, 1, 1}, outputsOf(i, linked));
            assertThat(p.get("output").asString()).isEqualTo(expected.label());
            // the missing model counts as disagreeing: at most 3 of 4 equal weights agree
            assertThat(p.get("confidence").doubleValue()).isCloseTo(expected.confidence() * 3 / 4, within(1e-9));
        }
        // a fresh input: the ONNX models have to run too, the answer still comes by the SLO
        long start = System.nanoTime();
        JsonNode p = post(query, "/straggle/predict", Map.of("input", data.images().get(IMAGES + 1)));
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertThat(millis).as("%s", p).isLessThan(1200);
        assertThat(p.get("default").booleanValue()).as("%s", p).isFalse();
        assertThat(p.get("models_selected").intValue()).isEqualTo(4);
        assertThat(p.get("models_answered").intValue()).isBetween(1, 3);
        assertThat(slowInputs.get()).as("the straggler was queried (and is still working)").isPositive();
    }

    @Test
    @Order(8)
    void badSelectionSettingsAndFeedbackGet400() {
        expectError(admin, "/admin/add_app", appBody("bad1", "exp5", null, null), 400, "exp3");
        expectError(admin, "/admin/add_app", appBody("bad1", "exp5", null, null), 400, "exp4");
        expectError(admin, "/admin/add_app", appBody("bad2", "exp4", Map.of("etaa", 1), null), 400, "etaa");
        expectError(admin, "/admin/add_app", appBody("bad3", "exp4", Map.of("eta", -1), null), 400, "eta");
        expectError(admin, "/admin/add_app", appBody("bad4", "exp4", null, 2), 400, "confidence_threshold");
        expectError(admin, "/admin/add_app", appBody("bad5", "single", Map.of("eta", 0.1), null), 400, "single");
        for (String name : List.of("bad1", "bad2", "bad3", "bad4", "bad5")) {
            expectError(admin, "/admin/get_application", Map.of("name", name), 404, name);
        }
        expectError(query, "/ens/update", Map.of("input", images.get(0)), 400, "label");
        expectError(query, "/ens/update", Map.of("input", images.get(0), "label", List.of(1)), 400, "label");
        expectError(query, "/ens/predict", Map.of("input", images.get(0), "uid", 1, "context", "x"), 400, "uid");
        expectError(query, "/ens/predict", Map.of("input", images.get(0), "version", "1"), 400, "version");
        // a 1 MB uid or context is refused on both endpoints, and not quoted back
        String megabyte = "u".repeat(1 << 20);
        for (String field : List.of("uid", "context")) {
            for (String endpoint : List.of("/ens/update", "/ens/predict")) {
                String text = expectError(query, endpoint, Map.of(field, megabyte, "input", images.get(0),
                        "label", data.label(0)), 400, "'" + field + "' is longer than the limit of 256 bytes");
                assertThat(text.length()).isLessThan(300);
            }
        }
        // the limit is in UTF-8 bytes: 129 two-byte characters are over it, 256 ASCII ones are not
        expectError(query, "/ens/update", Map.of("uid", "é".repeat(129), "input", images.get(0), "label",
                data.label(0)), 400, "256 bytes");
        assertThat(post(query, "/ens/predict", Map.of("uid", "u".repeat(256), "input", images.get(0)))
                .get("default").booleanValue()).isFalse();
        // nothing was observed
        assertThat(new Exp4Policy().codec().decode(state("ens", null).state()).observations()).isEqualTo(FEEDBACK);

        // a label the policy cannot learn from is the client's error, not the store's
        addApp("reg", "exp4", Map.of("task", "regression"), null, SLO, ONNX_MODELS);
        expectError(query, "/reg/update", Map.of("input", images.get(0), "label", "cat"), 400, "'cat'");
        assertThat(store.get("reg/exp4", null).blockOptional(Duration.ofSeconds(5))).isEmpty();
        assertThat(post(query, "/reg/update", Map.of("input", images.get(0), "label", 3)).get("observations")
                .longValue()).isEqualTo(1);
    }

    /**
     * A flood of 1,500 distinct uids' feedback on one app, bounded at 1,000 states per app: Redis
     * keeps the 1,000 most recent, each with the default 7-day TTL, and the app-wide state.
     */
    @Test
    @Order(10)
    void aFloodOfDistinctUidsLeavesAtMostTheBoundOfStatesInRedisEachExpiring() {
        for (int i = 0; i < 1_500; i++) {
            assertThat(post(query, "/ens/update", Map.of("uid", "flood-" + i, "input", images.get(0),
                    "label", data.label(0))).get("observations").longValue()).isEqualTo(1);
        }
        RedisSelectionStateStore redisStore = (RedisSelectionStateStore) store;
        RedisClient client = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            List<String> keys = c.sync().keys(PREFIX + ":sel:ens%2Fexp4:*");
            assertThat(keys).hasSize(1_001).contains(redisStore.key("ens/exp4", null),
                    redisStore.key("ens/exp4", "uid:flood-1499"));
            for (String key : keys) {
                assertThat(c.sync().pttl(key)).as(key).isBetween(Duration.ofDays(6).toMillis(), Duration.ofDays(7).toMillis());
            }
        } finally {
            client.shutdown();
        }
        assertThat(store.evictions()).isGreaterThanOrEqualTo(500);
    }

    @Test
    @Order(9)
    void policyNamesAreCaseInsensitiveEverywhere() {
        addApp("shouting", "SINGLE", null, null, SLO, List.of(CNN));
        addApp("shouting4", " Exp4 ", null, null, SLO, ONNX_MODELS);
        assertThat(post(admin, "/admin/get_application", Map.of("name", "shouting")).get("selection_policy")
                .asString()).isEqualTo("single");
        JsonNode p = post(query, "/shouting/predict", Map.of("input", images.get(0), "version", "1"));
        assertThat(p.get("output").asString()).isEqualTo(answers.get(CNN).get(0));
        assertThat(p.has("models_selected")).as("%s", p).isFalse();
        JsonNode u = post(query, "/shouting/update", Map.of("input", images.get(0), "label", data.label(0)));
        assertThat(u.get("observed").booleanValue()).as("%s", u).isFalse();
        assertThat(store.get("shouting/single", null).blockOptional(Duration.ofSeconds(5))).isEmpty();
        assertThat(post(query, "/shouting4/predict", Map.of("input", images.get(0))).get("models_selected").intValue())
                .isEqualTo(3);
        assertThat(post(query, "/shouting4/update", Map.of("input", images.get(0), "label", data.label(0)))
                .get("observations").longValue()).isEqualTo(1);
    }

    @Test
    @Order(99)
    void withRedisDownFeedbackFailsLoudlyButPredictionsUseTheLastKnownState() {
        int outvoted = first(i -> cnnOutvoted(i), FEEDBACK, IMAGES);
        String cnn = answers.get(CNN).get(outvoted);
        // the gateway has read the learned state, so it knows it
        assertThat(post(query, "/ens/predict", Map.of("input", images.get(outvoted))).get("output").asString())
                .isEqualTo(cnn);

        redis.stop();

        String text = query.post().uri("/ens/update").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("input", images.get(0), "label", data.label(0))).exchange()
                .expectStatus().isEqualTo(503).expectBody(String.class).returnResult().getResponseBody();
        JsonNode error = json.readTree(text);
        assertThat(error.has("error")).as(text).isTrue();
        assertThat(error.get("cause").asString()).as(text).isNotBlank();

        JsonNode p = post(query, "/ens/predict", Map.of("input", images.get(outvoted)));
        assertThat(p.get("default").booleanValue()).as("%s", p).isFalse();
        assertThat(p.get("output").asString()).as("answered with the last known (learned) weights").isEqualTo(cnn);
        assertThat(p.get("models_answered").intValue()).isEqualTo(3);
        // a context never seen has no last known state: the initial one
        String majority = vote(linked, new double[] {1, 1, 1}, outputsOf(outvoted, linked)).label();
        assertThat(post(query, "/ens/predict", Map.of("uid", 42, "input", images.get(outvoted)))
                .get("output").asString()).isEqualTo(majority);
        assertThat(post(query, "/bandit/predict", Map.of("input", images.get(5))).get("default").booleanValue())
                .isFalse();
        assertThat(post(query, "/single/predict", Map.of("input", images.get(5))).get("output").asString())
                .isEqualTo(answers.get(CNN).get(5));
        String metrics = query.get().uri("/metrics").accept(MediaType.TEXT_PLAIN).exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        assertThat(metrics).contains("servegate_selection_state_fallbacks_total");
    }


    // ------------------------------------------------------------------------------------------

    record Vote(String label, double confidence) {
    }

    /** Exp4's weighted vote: most weight, then most votes, then first in link order. */
    private static Vote vote(List<String> models, double[] w, Map<String, String> outputs) {
        Map<String, double[]> byLabel = new LinkedHashMap<>(); // label → {weight, count}
        double total = 0;
        for (int i = 0; i < models.size(); i++) {
            total += w[i];
            String o = outputs.get(models.get(i));
            if (o != null) {
                double[] v = byLabel.computeIfAbsent(o, k -> new double[2]);
                v[0] += w[i];
                v[1]++;
            }
        }
        String best = null;
        double[] bv = null;
        for (Map.Entry<String, double[]> e : byLabel.entrySet()) {
            double[] v = e.getValue();
            if (bv == null || v[0] > bv[0] || (v[0] == bv[0] && v[1] > bv[1])) {
                best = e.getKey();
                bv = v;
            }
        }
        return new Vote(best, bv[0] / total);
    }

    private Map<String, String> outputsOf(int image, List<String> models) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String m : models) {
            out.put(m, answers.get(m).get(image));
        }
        return out;
    }

    private long distinctAnswers(int image) {
        return ONNX_MODELS.stream().map(m -> answers.get(m).get(image)).distinct().count();
    }

    /** logreg and tiny agree with each other and not with the cnn. */
    private boolean cnnOutvoted(int image) {
        String cnn = answers.get(CNN).get(image);
        String logreg = answers.get(LOGREG).get(image);
        return logreg.equals(answers.get(TINY).get(image)) && !logreg.equals(cnn);
    }

    private static int first(java.util.function.IntPredicate p, int from, int to) {
        for (int i = from; i < to; i++) {
            if (p.test(i)) {
                return i;
            }
        }
        throw new AssertionError("no image in [" + from + ", " + to + ") satisfies the condition");
    }

    private Versioned state(String app, String context) {
        // states are kept per app and policy (SelectionService.stateName)
        Versioned v = store.get(app + "/" + (app.equals("bandit") ? "exp3" : "exp4"), context)
                .block(Duration.ofSeconds(5));
        assertThat(v).as("state of %s/%s", app, context).isNotNull();
        return v;
    }

    private void addApp(String name, String policy, Map<String, ?> params, Double threshold, long slo,
            List<String> models) {
        Map<String, Object> body = appBody(name, policy, params, threshold);
        body.put("latency_slo_micros", slo);
        adminOk("add_app", body);
        adminOk("add_model_links", Map.of("app_name", name, "model_names", models));
    }

    private static Map<String, Object> appBody(String name, String policy, Map<String, ?> params, Number threshold) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", name);
        body.put("input_type", "floats");
        body.put("default_output", "-1");
        body.put("latency_slo_micros", SLO);
        if (policy != null) {
            body.put("selection_policy", policy);
        }
        if (params != null) {
            body.put("selection_params", params);
        }
        if (threshold != null) {
            body.put("confidence_threshold", threshold);
        }
        return body;
    }

    private void adminOk(String endpoint, Map<String, ?> body) {
        admin.post().uri("/admin/" + endpoint).contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectStatus().isOk();
    }

    private JsonNode post(WebTestClient client, String uri, Object body) {
        EntityExchangeResult<String> r = client.post().uri(uri).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body).exchange().expectBody(String.class).returnResult();
        assertThat(r.getStatus().value()).as("%s → %s", uri, r.getResponseBody()).isEqualTo(200);
        return json.readTree(r.getResponseBody());
    }

    private String expectError(WebTestClient client, String uri, Object body, int status, String causeFragment) {
        EntityExchangeResult<String> r = client.post().uri(uri).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body).exchange().expectBody(String.class).returnResult();
        String text = r.getResponseBody();
        assertThat(r.getStatus().value()).as("%s → %s", uri, text).isEqualTo(status);
        JsonNode node = json.readTree(text);
        assertThat(node.has("error")).as(text).isTrue();
        assertThat(node.get("cause").asString()).as(text).contains(causeFragment);
        return text;
    }
}
