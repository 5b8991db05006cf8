package io.servegate.gateway.rollout;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.servegate.core.rollout.StickyAssignment;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.FreePort;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.InferTensorContents;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelInferResponse;
import io.servegate.oip.client.TensorType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * A canary covers every way its model is queried, on a real gateway with emulated containers
 * ({@link RolloutDriver}): an app with a learning selection policy (exp3) calling the model, a
 * pipeline with the model as a stage, and Open Inference Protocol clients over REST and gRPC. Version 1 has 10 classes and answers class
 * 7's input with 7; the candidate, version 2, has 5 classes and answers it with 2, so each answer
 * says which version gave it.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0",
    "servegate.oip.timeout=10s",
    "servegate.rollouts.interval=100ms"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RolloutQueryPathsEndToEndTest {

    private static final int GRPC_PORT = FreePort.pick();
    private static final double SHARE = 0.3;
    private static final String MODEL = "paths";
    private static final String EXP3_APP = "paths-exp3";
    private static final String PIPELINE = "paths-pipeline";

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    private RolloutDriver driver;
    private ManagedChannel channel;
    private GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub grpc;

    @DynamicPropertySource
    static void grpcPort(DynamicPropertyRegistry properties) {
        properties.add("servegate.oip.grpc-port", () -> GRPC_PORT);
    }

    @BeforeAll
    void start() {
        driver = new RolloutDriver(queryPort, adminServer.port(), json);
        channel = NettyChannelBuilder.forAddress("127.0.0.1", GRPC_PORT).usePlaintext().build();
        grpc = GRPCInferenceServiceGrpc.newBlockingStub(channel);
    }

    @AfterAll
    void stop() throws InterruptedException {
        driver.close();
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    /** The version and output of a one-row gRPC infer of class {@code i}'s input ({@code version} "" = none). */
    private String[] grpcInfer(String version, String id, int i) {
        InferTensorContents.Builder contents = InferTensorContents.newBuilder();
        for (float x : RolloutDriver.oneHot(i)) {
            contents.addFp32Contents(x);
        }
        ModelInferResponse r = grpc.withDeadlineAfter(30, TimeUnit.SECONDS).modelInfer(ModelInferRequest.newBuilder()
                .setModelName(MODEL).setModelVersion(version).setId(id)
                .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("FP32")
                        .addShape(1).addShape(RolloutDriver.CLASSES).setContents(contents))
                .build());
        List<String> outputs = TensorType.STRINGS.decode("BYTES", List.of(1L), r.getRawOutputContents(0));
        return new String[] {r.getModelVersion(), outputs.get(0)};
    }

    /** The version and output of a one-row REST infer. */
    private String[] restInfer(String version, String id, int i) throws Exception {
        JsonNode n = driver.oipInfer(MODEL, version, id, i);
        return new String[] {n.get("model_version").asString(), n.get("outputs").get(0).get("data").get(0).asString()};
    }

    private static boolean drawn(String rolloutId, String userKey) {
        return StickyAssignment.point(rolloutId, userKey) < SHARE;
    }

    @Test
    void anExp3AppAPipelineAndOipClientsReachTheCandidateByTheStepsShareAreCountedAndReturnToTheBaselineOnRollback()
            throws Exception {
        driver.deploy(MODEL, 5);
        driver.admin("add_app", Map.of("name", EXP3_APP, "input_type", "floats", "default_output", "-1",
                "latency_slo_micros", RolloutDriver.SLO_MICROS, "selection_policy", "exp3"));
        driver.admin("add_model_links", Map.of("app_name", EXP3_APP, "model_names", List.of(MODEL)));
        driver.admin("add_pipeline", Map.of("name", PIPELINE, "input_type", "floats", "default_output", "-1",
                "latency_slo_micros", RolloutDriver.SLO_MICROS, "stages", List.of(Map.of("name", "only",
                        "model", MODEL))));
        // never advances (too much feedback required); rolled back once labels show the candidate worse
        String id = driver.admin("start_rollout", Map.of("model_name", MODEL, "candidate_version", "2",
                "steps", List.of(SHARE, 1.0), "guards", Map.of("min_feedback", 1_000_000_000, "warmup_queries", 0)))
                .get("id").asString();
        long candidate = 0;
        long baseline = 0;

        // the exp3 app's call of the model: sticky by uid, as a single-model app's query
        List<String> exp3OnCandidate = new ArrayList<>();
        for (int u = 0; u < 200; u++) {
            String uid = "e" + u;
            boolean expected = drawn(id, "uid:" + uid);
            assertThat(driver.predict(EXP3_APP, uid, 7)).as(uid).isEqualTo(expected ? "2" : "7");
            assertThat(driver.predict(EXP3_APP, uid, 7)).as(uid + " again").isEqualTo(expected ? "2" : "7");
            if (expected) {
                exp3OnCandidate.add(uid);
            }
        }
        candidate += 2L * exp3OnCandidate.size();
        baseline += 2L * (200 - exp3OnCandidate.size());
        assertThat(exp3OnCandidate.size()).isBetween(36, 84);

        // the pipeline's stage: sticky by the pipeline query's uid, as an app's query
        List<String> pipelineOnCandidate = new ArrayList<>();
        for (int u = 0; u < 200; u++) {
            String uid = "p" + u;
            boolean expected = drawn(id, "uid:" + uid);
            assertThat(driver.predict(PIPELINE, uid, 7)).as(uid).isEqualTo(expected ? "2" : "7");
            if (expected) {
                pipelineOnCandidate.add(uid);
            }
        }
        candidate += pipelineOnCandidate.size();
        baseline += 200 - pipelineOnCandidate.size();
        assertThat(pipelineOnCandidate.size()).isBetween(36, 84);

        // OIP requests with an id: sticky by it, the same over REST and gRPC
        List<String> idsOnCandidate = new ArrayList<>();
        for (int n = 0; n < 200; n++) {
            String rid = "r" + n;
            boolean expected = drawn(id, "id:" + rid);
            String[] rest = restInfer(null, rid, 7);
            String[] g = grpcInfer("", rid, 7);
            for (String[] answer : List.of(rest, g)) {
                assertThat(answer).as(rid).containsExactly(expected ? "2" : "1", expected ? "2" : "7");
            }
            if (expected) {
                idsOnCandidate.add(rid);
            }
        }
        candidate += 2L * idsOnCandidate.size();
        baseline += 2L * (200 - idsOnCandidate.size());
        assertThat(idsOnCandidate.size()).isBetween(36, 84);

        // without an id: drawn at random with the step's share
        int randomOnCandidate = 0;
        for (int n = 0; n < 300; n++) {
            String[] answer = n % 2 == 0 ? restInfer(null, null, 7) : grpcInfer("", "", 7);
            assertThat(answer[1]).isEqualTo(answer[0].equals("2") ? "2" : "7");
            randomOnCandidate += answer[0].equals("2") ? 1 : 0;
        }
        assertThat(randomOnCandidate).as("of 300 at share %s", SHARE).isBetween(54, 126);
        candidate += randomOnCandidate;
        baseline += 300 - randomOnCandidate;

        // a version named explicitly is never rerouted, nor counted
        for (String rid : idsOnCandidate) {
            assertThat(restInfer("1", rid, 7)).as(rid).containsExactly("1", "7");
            assertThat(grpcInfer("1", rid, 7)).as(rid).containsExactly("1", "7");
        }

        long expectedCandidate = candidate;
        long expectedBaseline = baseline;
        JsonNode counted = awaitEvidence(e -> e.get("candidate").get("queries").longValue() == expectedCandidate
                && e.get("baseline").get("queries").longValue() == expectedBaseline);
        assertThat(counted.get("candidate").get("slo_misses").longValue()).isZero();

        // exp3 feedback is charged to the version that answered (the candidate is wrong on class 7) until
        // the loss guard rolls the candidate back
        int joined = 0;
        for (int u = 0; u < 200; u++) {
            String uid = "e" + u;
            JsonNode f = driver.feedback(EXP3_APP, uid, 7);
            assertThat(f.get("observed").booleanValue()).isTrue();
            JsonNode rollouts = f.get("rollouts");
            if (rollouts != null) {
                boolean onCandidate = exp3OnCandidate.contains(uid);
                assertThat(rollouts.size()).isEqualTo(1);
                assertThat(rollouts.get(0).get("model").asString()).isEqualTo(MODEL);
                assertThat(rollouts.get(0).get("rollout").asString()).isEqualTo(id);
                assertThat(rollouts.get(0).get("version").asString()).as(uid).isEqualTo(onCandidate ? "2" : "1");
                assertThat(rollouts.get(0).get("loss").doubleValue()).as(uid).isEqualTo(onCandidate ? 1.0 : 0.0);
                joined++;
            }
        }
        assertThat(joined).as("labels joined before the rollback").isGreaterThanOrEqualTo(60);
        JsonNode r = driver.awaitStatus(MODEL, "rolled_back", Duration.ofSeconds(20));
        JsonNode last = r.get("history").get(r.get("history").size() - 1);
        assertThat(last.get("reason").asString()).startsWith("guard breached: loss_increase");
        assertThat(r.get("evidence").get("candidate").get("feedback").longValue()).isPositive();
        assertThat(r.get("evidence").get("baseline").get("mean_loss").doubleValue()).isZero();

        // after the rollback every path gets version 1 again
        for (String uid : exp3OnCandidate) {
            assertThat(driver.predict(EXP3_APP, uid, 7)).as(uid).isEqualTo("7");
        }
        for (String uid : pipelineOnCandidate) {
            assertThat(driver.predict(PIPELINE, uid, 7)).as(uid).isEqualTo("7");
        }
        for (String rid : idsOnCandidate) {
            assertThat(restInfer(null, rid, 7)).as(rid).containsExactly("1", "7");
            assertThat(grpcInfer("", rid, 7)).as(rid).containsExactly("1", "7");
        }
    }

    /** Waits up to 10 s for the stored evidence of the model's rollout to satisfy {@code done}. */
    private JsonNode awaitEvidence(Predicate<JsonNode> done) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        JsonNode e = driver.rollout(MODEL).get("evidence");
        while (!done.test(e)) {
            assertThat(System.nanoTime()).as("evidence %s", e).isLessThan(until);
            Thread.sleep(50);
            e = driver.rollout(MODEL).get("evidence");
        }
        return e;
    }
}
