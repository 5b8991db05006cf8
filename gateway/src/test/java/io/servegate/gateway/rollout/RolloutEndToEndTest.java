package io.servegate.gateway.rollout;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.containers.emulated.EmulatedPredictor;
import io.servegate.core.rollout.StickyAssignment;
import io.servegate.gateway.api.AdminServer;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * Canary rollouts end to end on the in-memory registry: a real gateway, emulated containers
 * in-process on loopback gRPC, queries and {@code /{app}/update} feedback over HTTP. Every
 * container labels a one-hot input of class {@code i} with {@code i mod classes}: with 10 classes
 * always right, with 9 wrong on class 9 (10 points less accurate), with 5 wrong on classes 5..9.
 * Each test has its own model and app.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0",
    "servegate.rollouts.interval=100ms"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RolloutEndToEndTest {

    /** Generous for a loaded shared machine: the SLO guard is not what these tests are about. */
    private static final long SLO_MICROS = 2_000_000;

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    private final List<ModelContainer<float[], String>> containers = new ArrayList<>();
    private RolloutDriver driver;

    @BeforeAll
    void start() {
        driver = new RolloutDriver(queryPort, adminServer.port(), json);
    }

    @AfterAll
    void stop() {
        driver.close();
        containers.forEach(ModelContainer::close);
    }

    /** Version 1 with 10 classes (current), version 2 with {@code candidateClasses}, an app on the model. */
    private void deploy(String model, int candidateClasses) throws Exception {
        for (int v = 1; v <= 2; v++) {
            EmulatedPredictor<float[]> p = new EmulatedPredictor<>(0.2, 0, v == 1 ? 10 : candidateClasses);
            ModelContainer<float[], String> c = ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS,
                    p).name(model).version(String.valueOf(v)).host("127.0.0.1").port(0).build().start();
            containers.add(c);
            driver.admin("add_model", Map.of("model_name", model, "model_version", String.valueOf(v),
                    "input_type", "floats"));
            driver.admin("add_container", Map.of("model_name", model, "model_version", String.valueOf(v),
                    "address", "127.0.0.1:" + c.port()));
        }
        driver.admin("set_model_version", Map.of("model_name", model, "model_version", "1"));
        driver.admin("add_app", Map.of("name", model + "-app", "input_type", "floats", "default_output", "-1",
                "latency_slo_micros", SLO_MICROS));
        driver.admin("add_model_links", Map.of("app_name", model + "-app", "model_names", List.of(model)));
        for (int v = 1; v <= 2; v++) {
            awaitReady(model, String.valueOf(v));
        }
    }

    private void awaitReady(String model, String version) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!readyAll(model, version)) {
            assertThat(System.nanoTime()).as(model + ":" + version + " became ready").isLessThan(until);
            Thread.sleep(50);
        }
    }

    private boolean readyAll(String model, String version) throws Exception {
        for (JsonNode c : driver.admin("get_all_containers", Map.of())) {
            if (c.path("model_name").asString().equals(model) && c.path("model_version").asString().equals(version)
                    && c.path("available").booleanValue()) {
                return true;
            }
        }
        return false;
    }

    private static Map<String, Object> start(String model, List<Double> steps, Map<String, Object> guards) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model_name", model);
        body.put("candidate_version", "2");
        body.put("mode", "canary");
        body.put("steps", steps);
        body.put("guards", guards);
        return body;
    }

    @Test
    void aCandidateTenPointsLessAccurateIsRolledBackBeforeItAnswersFivePercentOfQueries() throws Exception {
        deploy("worse", 9);
        driver.admin("start_rollout", start("worse", List.of(0.02, 0.05, 0.25, 0.5, 1.0), Map.of()));

        long sent = driver.queryWithFeedbackUntil("worse-app",
                () -> !driver.rollout("worse").get("status").asString().equals("running"), 40_000);

        JsonNode r = driver.awaitStatus("worse", "rolled_back", Duration.ofSeconds(10));
        JsonNode last = r.get("history").get(r.get("history").size() - 1);
        assertThat(last.get("decision").asString()).isEqualTo("rollback");
        assertThat(last.get("reason").asString()).startsWith("guard breached: loss_increase");
        long candidateQueries = r.get("evidence").get("candidate").get("queries").longValue();
        assertThat(candidateQueries).isPositive();
        assertThat((double) candidateQueries / sent).as("candidate's share of %d queries", sent).isLessThan(0.05);
        assertThat(r.get("share").doubleValue()).isZero();
        // after the rollback every user gets the current version: class 9 is answered 9, never 0
        for (int u = 0; u < 200; u++) {
            assertThat(driver.predict("worse-app", "after-" + u, 9)).isEqualTo("9");
        }
    }

    @Test
    void aCandidateAsGoodAsTheCurrentVersionIsPromotedWithoutAnOperator() throws Exception {
        deploy("equal", 10);
        Map<String, Object> guards = Map.of("max_slo_miss_rate", 0.05, "max_error_rate", 0.05,
                "max_loss_increase", 0.05, "min_feedback", 50, "confidence", 0.95, "min_step_queries", 50,
                "min_step_ms", 0);
        driver.admin("start_rollout", start("equal", List.of(0.1, 0.5, 1.0), guards));

        driver.queryWithFeedbackUntil("equal-app",
                () -> !driver.rollout("equal").get("status").asString().equals("running"), 20_000);

        JsonNode r = driver.awaitStatus("equal", "promoted", Duration.ofSeconds(10));
        assertThat(r.get("share").doubleValue()).isEqualTo(1.0);
        List<String> decisions = new ArrayList<>();
        r.get("history").forEach(d -> decisions.add(d.get("decision").asString()));
        assertThat(decisions).containsExactly("start", "advance", "advance", "promote");
        JsonNode v2 = driver.admin("get_model", Map.of("model_name", "equal", "model_version", "2"));
        assertThat(v2.get("is_current_version").booleanValue()).isTrue();
    }

    @Test
    void aUserOnTheCandidateStaysOnItWhileTheStepHoldsAndLeavesItWhenAborted() throws Exception {
        deploy("sticky", 5);
        // never advances (too much feedback required) and never rolls back (no feedback sent)
        JsonNode started = driver.admin("start_rollout", start("sticky", List.of(0.3, 1.0),
                Map.of("min_feedback", 1_000_000_000)));
        String id = started.get("id").asString();
        Set<String> onCandidate = new HashSet<>();
        for (int u = 0; u < 300; u++) {
            String uid = "user" + u;
            String first = driver.predict("sticky-app", uid, 7);
            for (int again = 0; again < 3; again++) {
                assertThat(driver.predict("sticky-app", uid, 7)).as(uid).isEqualTo(first);
            }
            boolean expected = StickyAssignment.point(id, "uid:" + uid) < 0.3;
            // the candidate (5 classes) answers class 7 with 2, the current version with 7
            assertThat(first).as(uid).isEqualTo(expected ? "2" : "7");
            if (expected) {
                onCandidate.add(uid);
            }
        }
        assertThat(onCandidate.size()).isBetween(60, 120);

        driver.admin("abort_rollout", Map.of("model_name", "sticky"));
        for (String uid : onCandidate) {
            assertThat(driver.predict("sticky-app", uid, 7)).as(uid).isEqualTo("7");
        }
        assertThat(driver.rollout("sticky").get("status").asString()).isEqualTo("aborted");
    }

    @Test
    void adminCallsRefuseBadInputAndFollowTheRolloutsState() throws Exception {
        deploy("admin", 10);
        expect("start_rollout", "{\"model_name\":\"nope\",\"candidate_version\":\"2\"}", 400, "model 'nope' not found");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"7\"}", 400, "no version '7'");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"1\"}", 400,
                "already the current version");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\",\"guards\":"
                + "{\"max_error_rate\":1.5}}", 400, "max_error_rate must be in [0, 1)");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\",\"guards\":"
                + "{\"confidence\":0.2}}", 400, "confidence must be in [0.5, 1)");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\",\"guards\":"
                + "{\"max_errors\":0.1}}", 400, "unknown field 'max_errors'");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\",\"steps\":[0.5,0.2]}", 400,
                "steps must increase");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\",\"mode\":\"blue\"}", 400,
                "unknown rollout mode");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\",\"mode\":\"shadow\"}", 400,
                "shadow");
        expect("start_rollout", "{\"model_name\":\"admin\"}", 400, "candidate_version");
        expect("get_rollout", "{\"model_name\":\"admin\"}", 404, "has no rollout");

        JsonNode r = driver.admin("start_rollout", Map.of("model_name", "admin", "candidate_version", "2",
                "guards", Map.of("min_feedback", 1_000_000_000)));
        assertThat(r.get("status").asString()).isEqualTo("running");
        assertThat(r.get("baseline_version").asString()).isEqualTo("1");
        assertThat(r.get("share").doubleValue()).isEqualTo(0.01);
        assertThat(r.get("guards").get("min_feedback").longValue()).isEqualTo(1_000_000_000L);
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\"}", 409, "abort it first");
        expect("resume_rollout", "{\"model_name\":\"admin\"}", 409, "is running");

        assertThat(driver.admin("pause_rollout", Map.of("model_name", "admin")).get("status").asString())
                .isEqualTo("paused");
        expect("pause_rollout", "{\"model_name\":\"admin\"}", 409, "is paused");
        assertThat(driver.admin("resume_rollout", Map.of("model_name", "admin")).get("status").asString())
                .isEqualTo("running");
        JsonNode aborted = driver.admin("abort_rollout", Map.of("model_name", "admin"));
        assertThat(aborted.get("status").asString()).isEqualTo("aborted");
        assertThat(aborted.get("share").doubleValue()).isZero();
        List<String> decisions = new ArrayList<>();
        aborted.get("history").forEach(d -> decisions.add(d.get("decision").asString()));
        assertThat(decisions).containsExactly("start", "pause", "resume", "abort");
        expect("abort_rollout", "{\"model_name\":\"admin\"}", 409, "is aborted");
        // a final rollout makes room for the next one
        assertThat(driver.admin("start_rollout", Map.of("model_name", "admin", "candidate_version", "2"))
                .get("status").asString()).isEqualTo("running");
    }

    private void expect(String endpoint, String body, int status, String cause) throws Exception {
        HttpResponse<String> r = driver.adminRaw(endpoint, body);
        assertThat(r.statusCode()).as(endpoint + " " + body + ": " + r.body()).isEqualTo(status);
        assertThat(r.body()).as(endpoint + " " + body).contains(cause);
    }
}
