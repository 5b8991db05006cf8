package io.servegate.gateway.rollout;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.containers.emulated.EmulatedPredictor;
import io.servegate.core.rollout.StickyAssignment;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.api.AdminServer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * Shadow rollouts end to end on the in-memory registry: a real gateway, emulated containers
 * in-process on loopback gRPC, queries and feedback over HTTP. The candidate has 5 classes, so it
 * answers class {@code i} with {@code i mod 5}: every answer a user gets must be the current
 * version's {@code i}, never the candidate's, while the candidate receives copies whose agreement
 * and loss {@code get_rollout} shows.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0",
    "servegate.rollouts.interval=100ms",
    "servegate.rollouts.shadow-max-in-flight=8"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RolloutShadowEndToEndTest {

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    @Autowired
    MeterRegistry meters;

    private RolloutDriver driver;

    @BeforeAll
    void start() {
        driver = new RolloutDriver(queryPort, adminServer.port(), json);
    }

    @AfterAll
    void stop() {
        driver.close();
    }

    @Test
    void usersAlwaysGetTheCurrentVersionsAnswerWhileTheCandidateIsMeasuredOnCopies() throws Exception {
        EmulatedPredictor<float[]> five = new EmulatedPredictor<>(0.2, 0, 5);
        AtomicInteger received = new AtomicInteger();
        driver.deploy("shadow", (List<float[]> batch) -> {
            received.addAndGet(batch.size());
            return five.predictBatch(batch);
        }, RolloutDriver.SLO_MICROS);
        // a loss increase of 0.5 holds under 0.9, and no amount of feedback suffices: it keeps running
        JsonNode started = driver.admin("start_rollout", Map.of("model_name", "shadow", "candidate_version", "2",
                "mode", "shadow", "shadow_fraction", 0.5,
                "guards", Map.of("max_loss_increase", 0.9, "min_feedback", 1_000_000_000, "warmup_queries", 0)));
        assertThat(started.get("mode").asString()).isEqualTo("shadow");
        assertThat(started.get("steps").get(0).doubleValue()).isEqualTo(0.5);
        String id = started.get("id").asString();

        int users = 300;
        int inFraction = 0;
        for (int u = 0; u < users; u++) {
            int i = u % RolloutDriver.CLASSES;
            // the current version's answer, never the candidate's (which differs on classes 5..9)
            assertThat(driver.predict("shadow-app", "s" + u, i)).as("user s" + u).isEqualTo(String.valueOf(i));
            inFraction += StickyAssignment.point(id, "uid:s" + u) < 0.5 ? 1 : 0;
        }
        JsonNode c = awaitStable(() -> driver.rollout("shadow").get("evidence").get("candidate"));
        long copies = c.get("queries").longValue();
        assertThat(copies).as("copies of the users in the fraction").isPositive().isLessThanOrEqualTo(inFraction);
        // inputs repeat (10 classes), so the prediction cache answers some copies without the container
        assertThat(received.get()).as("the candidate's container got copies").isPositive()
                .isLessThanOrEqualTo((int) copies);
        assertThat(c.get("compared").longValue()).isEqualTo(copies);
        assertThat(c.get("agreements").longValue()).as("agrees on classes 0..4 only").isPositive()
                .isLessThan(copies);
        assertThat(c.get("errors").longValue()).isZero();

        for (int u = 0; u < users; u++) {
            JsonNode f = driver.feedback("shadow-app", "s" + u, u % RolloutDriver.CLASSES);
            if (f.path("observed").booleanValue()) {
                assertThat(f.get("version").asString()).as("the user's answer was the current version's")
                        .isEqualTo("1");
            }
        }
        JsonNode r = awaitStable(() -> driver.rollout("shadow"));
        JsonNode cand = r.get("evidence").get("candidate");
        JsonNode base = r.get("evidence").get("baseline");
        assertThat(cand.get("feedback").longValue()).as("a label for every copy").isEqualTo(copies);
        assertThat(base.get("feedback").longValue()).as("the same inputs").isEqualTo(copies);
        assertThat(base.get("mean_loss").doubleValue()).isZero();
        assertThat(cand.get("mean_loss").doubleValue()).isGreaterThan(0.3).isLessThan(0.7);
        assertThat(base.get("queries").longValue()).isEqualTo(users);
        assertThat(r.get("status").asString()).isEqualTo("running");
        assertThat(driver.admin("abort_rollout", Map.of("model_name", "shadow")).get("status").asString())
                .isEqualTo("aborted");
    }

    @Test
    void aShadowOfAnEqualCandidatePassesAndNeverPromotesIt() throws Exception {
        driver.deploy("pass", 10);
        driver.admin("start_rollout", Map.of("model_name", "pass", "candidate_version", "2", "mode", "shadow",
                "shadow_fraction", 1.0, "guards", Map.of("max_slo_miss_increase", 0.05, "max_error_rate", 0.05,
                        "max_loss_increase", 0.05, "min_feedback", 50, "confidence", 0.95, "min_step_queries", 50,
                        "min_step_ms", 0)));

        driver.queryWithFeedbackUntil("pass-app", RolloutDriver.CLASSES,
                () -> !driver.rollout("pass").get("status").asString().equals("running"), 20_000);

        JsonNode r = driver.awaitStatus("pass", "passed", java.time.Duration.ofSeconds(10));
        assertThat(r.get("share").doubleValue()).isZero();
        assertThat(r.get("history").get(r.get("history").size() - 1).get("decision").asString()).isEqualTo("pass");
        assertThat(r.get("evidence").get("candidate").get("agreements").longValue())
                .isEqualTo(r.get("evidence").get("candidate").get("compared").longValue()).isPositive();
        JsonNode v1 = driver.admin("get_model", Map.of("model_name", "pass", "model_version", "1"));
        assertThat(v1.get("is_current_version").booleanValue()).as("a shadow never promotes").isTrue();
    }

    @Test
    void copiesToACandidateThatCannotKeepUpAreDroppedAndNeverDelayTheUsersAnswers() throws Exception {
        CountDownLatch stuck = new CountDownLatch(1);
        AtomicBoolean blocking = new AtomicBoolean();
        EmulatedPredictor<float[]> ten = new EmulatedPredictor<>(0.2, 0, RolloutDriver.CLASSES);
        driver.deploy("flood", (List<float[]> batch) -> {
            if (blocking.get()) {
                stuck.await(); // once ready, the candidate answers nothing until the end of the test
            }
            return ten.predictBatch(batch);
        }, 500_000);
        JsonNode started = driver.admin("start_rollout", Map.of("model_name", "flood", "candidate_version", "2",
                "mode", "shadow", "shadow_fraction", 1.0, "guards", Map.of("max_slo_miss_increase", 0.99,
                        "max_error_rate", 0.99, "min_feedback", 1_000_000_000)));
        int users = 300;
        blocking.set(true);
        try {
            for (int u = 0; u < users; u++) {
                int i = u % RolloutDriver.CLASSES;
                assertThat(driver.predict("flood-app", "f" + u, i)).as("user f" + u).isEqualTo(String.valueOf(i));
            }
        } finally {
            stuck.countDown();
        }
        double sent = shadow("flood", "sent");
        double busy = shadow("flood", "dropped_busy");
        double inFlight = shadow("flood", "dropped_in_flight");
        assertThat(sent + busy + inFlight).as("every user's answer was offered for a copy").isEqualTo(users);
        assertThat(busy + inFlight).as("copies dropped while the candidate was stuck").isPositive();
        assertThat(sent).as("sent: at most 8 in flight, each held until its 500 ms deadline").isLessThan(users / 2);
        assertThat(started.get("status").asString()).isEqualTo("running");
    }

    private double shadow(String model, String outcome) {
        Counter c = meters.find("servegate.rollout.shadow").tag("model", model).tag("outcome", outcome).counter();
        return c == null ? 0 : c.count();
    }

    /** Polls until two reads 300 ms apart (three store intervals) are equal, up to 20 s. */
    private static JsonNode awaitStable(java.util.function.Supplier<JsonNode> read) throws Exception {
        long until = System.nanoTime() + 20_000_000_000L;
        JsonNode last = read.get();
        while (true) {
            Thread.sleep(300);
            JsonNode now = read.get();
            if (now.equals(last) || System.nanoTime() > until) {
                return now;
            }
            last = now;
        }
    }
}
