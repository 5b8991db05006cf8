package io.servegate.gateway.rollout;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.containers.emulated.EmulatedPredictor;
import io.servegate.core.rollout.StickyAssignment;
import io.servegate.gateway.api.AdminServer;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * Canary rollouts end to end on the in-memory registry: a real gateway, emulated containers
 * in-process on loopback gRPC, queries and {@code /{app}/update} feedback over HTTP. Every
 * container labels a one-hot input of class {@code i} with {@code i mod classes}: with 10 classes
 * always right, with 9 wrong on class 9 (10 points less accurate), with 5 wrong on classes 5..9.
 * Each test has its own model and app.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0",
    "servegate.rollouts.interval=100ms",
    // every answer from the candidate's container, not the prediction cache: the tests' few distinct inputs
    // would otherwise be cached after the candidate's first answers (its warm-up copies included)
    "servegate.cache.enabled=false"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RolloutEndToEndTest {

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    private RolloutDriver driver;

    @BeforeAll
    void start() {
        driver = new RolloutDriver(queryPort, adminServer.port(), json);
    }

    @AfterAll
    void stop() {
        driver.close();
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
        driver.deploy("worse", 9);
        driver.admin("start_rollout", start("worse", List.of(0.02, 0.05, 0.25, 0.5, 1.0), Map.of()));

        long sent = driver.queryWithFeedbackUntil("worse-app", RolloutDriver.CLASSES,
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
    void aCandidateThatMakesTheAppMissItsSloIsRolledBackWithinThirtySeconds() throws Exception {
        // every tenth batch of the candidate takes 1.5 SLOs; the others are as fast as the current version
        long sloMicros = 300_000;
        EmulatedPredictor<float[]> fast = new EmulatedPredictor<>(0.2, 0, RolloutDriver.CLASSES);
        AtomicInteger batches = new AtomicInteger();
        driver.deploy("slow", (List<float[]> batch) -> {
            if (batches.incrementAndGet() % 10 == 0) {
                Thread.sleep(sloMicros * 3 / 2 / 1000);
            }
            return fast.predictBatch(batch);
        }, sloMicros);
        driver.admin("start_rollout", start("slow", List.of(0.05, 0.25, 1.0), Map.of()));

        driver.queryWithFeedbackUntil("slow-app", RolloutDriver.CLASSES,
                () -> !driver.rollout("slow").get("status").asString().equals("running"), 40_000);

        JsonNode r = driver.awaitStatus("slow", "rolled_back", Duration.ofSeconds(10));
        JsonNode first = r.get("history").get(0);
        JsonNode last = r.get("history").get(r.get("history").size() - 1);
        assertThat(last.get("reason").asString()).startsWith("guard breached: slo_miss_increase");
        assertThat(last.get("at_ms").longValue() - first.get("at_ms").longValue()).isLessThan(30_000);
    }

    @Test
    void aCandidateAsGoodAsTheCurrentVersionIsPromotedWithoutAnOperator() throws Exception {
        driver.deploy("equal", 10);
        Map<String, Object> guards = Map.of("max_slo_miss_increase", 0.05, "max_error_rate", 0.05,
                "max_loss_increase", 0.05, "min_feedback", 50, "confidence", 0.95, "min_step_queries", 50,
                "min_step_ms", 0);
        driver.admin("start_rollout", start("equal", List.of(0.1, 0.5, 1.0), guards));

        driver.queryWithFeedbackUntil("equal-app", RolloutDriver.CLASSES,
                () -> !driver.rollout("equal").get("status").asString().equals("running"), 20_000);

        JsonNode r = driver.awaitStatus("equal", "promoted", Duration.ofSeconds(10));
        assertThat(r.get("share").doubleValue()).isEqualTo(1.0);
        List<String> decisions = new ArrayList<>();
        r.get("history").forEach(d -> decisions.add(d.get("decision").asString()));
        assertThat(decisions).containsExactly("start", "warmed", "advance", "advance", "promote");
        JsonNode v2 = driver.admin("get_model", Map.of("model_name", "equal", "model_version", "2"));
        assertThat(v2.get("is_current_version").booleanValue()).isTrue();
    }

    @Test
    void aCandidateStartedColdIsJudgedOnlyOnceItsWarmUpCopiesHaveWarmedIt() throws Exception {
        // as good as the current version, but its first 40 rows take 1.5 SLOs, as a freshly started
        // container's first batches do; judged at once it is rolled back, warmed up first it is promoted
        long sloMicros = 300_000;
        Map<String, Object> lenient = Map.of("max_slo_miss_increase", 0.05, "max_error_rate", 0.05,
                "max_loss_increase", 0.05, "min_feedback", 50, "confidence", 0.95, "min_step_queries", 50,
                "min_step_ms", 0);
        for (boolean warmup : List.of(false, true)) {
            String model = warmup ? "warmed" : "cold";
            EmulatedPredictor<float[]> fast = new EmulatedPredictor<>(0.2, 0, RolloutDriver.CLASSES);
            AtomicInteger rows = new AtomicInteger();
            driver.deploy(model, (List<float[]> batch) -> {
                if (rows.getAndAdd(batch.size()) < 40) {
                    Thread.sleep(sloMicros * 3 / 2 / 1000);
                }
                return fast.predictBatch(batch);
            }, sloMicros);
            Map<String, Object> guards = new LinkedHashMap<>(lenient);
            guards.put("warmup_queries", warmup ? 100 : 0);
            driver.admin("start_rollout", start(model, List.of(0.1, 0.5, 1.0), guards));

            driver.queryWithFeedbackUntil(model + "-app", RolloutDriver.CLASSES,
                    () -> !driver.rollout(model).get("status").asString().equals("running"), 30_000);

            JsonNode r = driver.rollout(model);
            List<String> decisions = new ArrayList<>();
            r.get("history").forEach(d -> decisions.add(d.get("decision").asString()));
            if (warmup) {
                assertThat(r.get("status").asString()).as(r.toString()).isEqualTo("promoted");
                assertThat(decisions).containsExactly("start", "warmed", "advance", "advance", "promote");
                assertThat(r.get("evidence").get("warmups").longValue()).isGreaterThanOrEqualTo(100);
            } else {
                assertThat(r.get("status").asString()).as(r.toString()).isEqualTo("rolled_back");
                assertThat(r.get("history").get(r.get("history").size() - 1).get("reason").asString())
                        .startsWith("guard breached: slo_miss_increase");
            }
            assertThat(rows.get()).as("the candidate's container answered past its cold rows").isGreaterThan(40);
        }
    }

    @Test
    void aUserOnTheCandidateStaysOnItWhileTheStepHoldsAndLeavesItWhenAborted() throws Exception {
        driver.deploy("sticky", 5);
        // never advances (too much feedback required) and never rolls back (no feedback sent)
        JsonNode started = driver.admin("start_rollout", start("sticky", List.of(0.3, 1.0),
                Map.of("min_feedback", 1_000_000_000, "warmup_queries", 0)));
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
        driver.deploy("admin", 10);
        expect("start_rollout", "{\"model_name\":\"nope\",\"candidate_version\":\"2\"}", 400, "model 'nope' not found");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"7\"}", 400, "no version '7'");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"1\"}", 400,
                "already the current version");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\",\"guards\":"
                + "{\"max_error_rate\":1.5}}", 400, "max_error_rate must be in [0, 1)");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\",\"guards\":"
                + "{\"confidence\":0.2}}", 400, "confidence must be in [0.5, 1)");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\",\"guards\":"
                + "{\"warmup_queries\":-1}}", 400, "field 'warmup_queries' must be in 0..");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\",\"guards\":"
                + "{\"max_errors\":0.1}}", 400, "unknown field 'max_errors'");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\",\"steps\":[0.5,0.2]}", 400,
                "steps must increase");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\",\"mode\":\"blue\"}", 400,
                "unknown rollout mode");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\",\"mode\":\"shadow\","
                + "\"steps\":[0.1]}", 400, "'steps' applies to mode 'canary'");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\",\"mode\":\"shadow\","
                + "\"shadow_fraction\":1.5}", 400, "'shadow_fraction' must be in (0, 1]");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\",\"mode\":\"shadow\","
                + "\"shadow_fraction\":0}", 400, "'shadow_fraction' must be in (0, 1]");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\",\"mode\":\"shadow\","
                + "\"shadow_fraction\":\"half\"}", 400, "'shadow_fraction' must be a number");
        expect("start_rollout", "{\"model_name\":\"admin\",\"candidate_version\":\"2\","
                + "\"shadow_fraction\":0.1}", 400, "'shadow_fraction' applies to mode 'shadow'");
        expect("start_rollout", "{\"model_name\":\"admin\"}", 400, "candidate_version");
        expect("get_rollout", "{\"model_name\":\"admin\"}", 404, "has no rollout");
        JsonNode shadow = driver.admin("start_rollout", Map.of("model_name", "admin", "candidate_version", "2",
                "mode", "shadow"));
        assertThat(shadow.get("warming").booleanValue()).as("warming up by default").isTrue();
        assertThat(shadow.get("share").doubleValue()).as("nothing copied for the guards while warming").isZero();
        assertThat(shadow.get("steps").get(0).doubleValue()).as("the default shadow fraction").isEqualTo(0.1);
        assertThat(shadow.get("guards").get("warmup_queries").longValue()).isEqualTo(200);
        driver.admin("abort_rollout", Map.of("model_name", "admin"));

        JsonNode r = driver.admin("start_rollout", Map.of("model_name", "admin", "candidate_version", "2",
                "guards", Map.of("min_feedback", 1_000_000_000, "warmup_queries", 0)));
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
