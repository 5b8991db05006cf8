package io.servegate.gateway.rollout;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.rollout.StickyAssignment;
import io.servegate.gateway.GatewayApplication;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.GatewayChild;
import io.servegate.gateway.testsupport.RedisServer;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * A rollout on the Redis registry survives its gateway: a canary is started and advanced one
 * step on one gateway (a child process), that gateway is killed ({@code SIGKILL}), and a new one
 * on the same Redis routes every user
 * as before (the stored step and the sticky assignment), then continues the rollout from that step
 * to its promotion, deciding from the evidence both gateways stored.
 *
 * <p>The candidate has 5 classes: it answers classes 0..4 as the current version does (the
 * feedback is on those) and class 7 with 2, which tells which version answered.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RolloutRedisRestartTest {

    private static final String MODEL = "restart";
    private static final String APP = MODEL + "-app";

    private final RedisServer redis = RedisServer.start();
    private final List<RolloutDriver> drivers = new ArrayList<>();
    private GatewayChild killed;
    private ConfigurableApplicationContext gateway;

    private String[] args(String name) {
        return new String[] {
            "--servegate.registry.store=redis",
            "--servegate.registry.redis-uri=" + redis.uri(),
            "--servegate.registry.key-prefix=sg-rollout-restart",
            "--servegate.fleet.secret=rollout-restart",
            "--servegate.fleet.name=" + name,
            "--servegate.fleet.advertise-host=127.0.0.1",
            "--servegate.fleet.heartbeat=200ms",
            "--servegate.fleet.lease=1s",
            "--servegate.rollouts.interval=100ms",
            "--servegate.oip.grpc-port=0",
            "--spring.main.banner-mode=off",
            "--logging.level.root=WARN"};
    }

    /** The gateway that is killed: a child process. */
    private RolloutDriver startChild(String name) throws Exception {
        killed = GatewayChild.start("256m", args(name));
        RolloutDriver driver = new RolloutDriver(killed.port(), URI.create(killed.adminUrl()).getPort(),
                JsonMapper.builder().build());
        drivers.add(driver);
        return driver;
    }

    /** The gateway that takes over: in this JVM. */
    private RolloutDriver startGateway(String name) {
        List<String> a = new ArrayList<>(List.of("--server.port=0", "--servegate.admin.port=0"));
        a.addAll(List.of(args(name)));
        gateway = new SpringApplicationBuilder(GatewayApplication.class).run(a.toArray(String[]::new));
        int queryPort = ((WebServerApplicationContext) gateway).getWebServer().getPort();
        RolloutDriver driver = new RolloutDriver(queryPort, gateway.getBean(AdminServer.class).port(),
                gateway.getBean(ObjectMapper.class));
        drivers.add(driver);
        return driver;
    }

    @AfterAll
    void stop() throws Exception {
        if (gateway != null) {
            gateway.close();
        }
        if (killed != null) {
            killed.close();
        }
        drivers.forEach(RolloutDriver::close);
        redis.close();
    }

    @Test
    void aRolloutInProgressContinuesFromTheSameStepAfterItsGatewayIsKilled() throws Exception {
        RolloutDriver first = startChild("gw-a");
        first.deploy(MODEL, 5);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model_name", MODEL);
        body.put("candidate_version", "2");
        body.put("steps", List.of(0.2, 0.5, 1.0));
        body.put("guards", Map.of("max_slo_miss_increase", 0.05, "max_error_rate", 0.05, "max_loss_increase", 0.05,
                "min_feedback", 50, "confidence", 0.95, "min_step_queries", 200, "min_step_ms", 0));
        String id = first.admin("start_rollout", body).get("id").asString();

        // up to the second step, then no more queries: the second step needs 200 more on the candidate
        first.queryWithFeedbackUntil(APP, 5, () -> first.rollout(MODEL).get("step").intValue() >= 1, 20_000);
        JsonNode before = first.rollout(MODEL);
        assertThat(before.get("step").intValue()).isEqualTo(1);
        assertThat(before.get("status").asString()).isEqualTo("running");
        List<String> routed = answers(first, id, 0.5);

        killed.kill();
        RolloutDriver second = startGateway("gw-b");
        JsonNode after = second.rollout(MODEL);
        assertThat(after.get("id").asString()).isEqualTo(id);
        assertThat(after.get("status").asString()).isEqualTo("running");
        assertThat(after.get("step").intValue()).isEqualTo(1);
        assertThat(after.get("share").doubleValue()).isEqualTo(0.5);
        assertThat(after.get("history")).isEqualTo(before.get("history"));
        // what the killed gateway had stored stays; only its last interval's counts may be lost
        assertThat(after.get("evidence").get("candidate").get("queries").longValue())
                .isGreaterThanOrEqualTo(before.get("evidence").get("candidate").get("queries").longValue());
        second.awaitReady(MODEL, "1");
        second.awaitReady(MODEL, "2");
        second.awaitPrediction(APP);
        assertThat(answers(second, id, 0.5)).isEqualTo(routed);

        second.queryWithFeedbackUntil(APP, 5, () -> !second.rollout(MODEL).get("status").asString()
                .equals("running"), 20_000);
        JsonNode done = second.awaitStatus(MODEL, "promoted", Duration.ofSeconds(10));
        List<String> decisions = new ArrayList<>();
        done.get("history").forEach(d -> decisions.add(d.get("decision").asString()));
        assertThat(decisions).containsExactly("start", "warmed", "advance", "advance", "promote");
        assertThat(second.admin("get_model", Map.of("model_name", MODEL, "model_version", "2"))
                .get("is_current_version").booleanValue()).isTrue();
    }

    /** Each of 100 users' answer to class 7, checked against the sticky assignment at {@code share}. */
    private static List<String> answers(RolloutDriver driver, String id, double share) throws Exception {
        List<String> out = new ArrayList<>();
        for (int u = 0; u < 100; u++) {
            String uid = "sticky" + u;
            String answer = driver.predict(APP, uid, 7);
            assertThat(answer).as(uid).isEqualTo(StickyAssignment.point(id, "uid:" + uid) < share ? "2" : "7");
            out.add(answer);
        }
        return out;
    }
}
