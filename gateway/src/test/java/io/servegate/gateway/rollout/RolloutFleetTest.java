package io.servegate.gateway.rollout;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.core.rollout.StickyAssignment;
import io.servegate.gateway.GatewayApplication;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.RedisServer;
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
import tools.jackson.databind.ObjectMapper;

/**
 * A rollout in a fleet of two gateways sharing one Redis: both route every user by the same
 * stored step, both count queries and feedback, and exactly one (the candidate version's owner)
 * takes every decision, from what both counted.
 *
 * <p>The candidate has 5 classes: it answers classes 0..4 as the current version does (the
 * feedback is on those) and class 7 with 2, which tells which version answered.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RolloutFleetTest {

    private static final String MODEL = "fleet";
    private static final String APP = MODEL + "-app";

    private final RedisServer redis = RedisServer.start();
    private final List<ConfigurableApplicationContext> gateways = new ArrayList<>();
    private final List<RolloutDriver> drivers = new ArrayList<>();

    private RolloutDriver startGateway(String name) {
        ConfigurableApplicationContext gateway = new SpringApplicationBuilder(GatewayApplication.class).run(
                "--server.port=0",
                "--servegate.admin.port=0",
                "--servegate.registry.store=redis",
                "--servegate.registry.redis-uri=" + redis.uri(),
                "--servegate.registry.key-prefix=sg-rollout-fleet",
                "--servegate.fleet.secret=rollout-fleet",
                "--servegate.fleet.name=" + name,
                "--servegate.fleet.advertise-host=127.0.0.1",
                "--servegate.fleet.heartbeat=200ms",
                "--servegate.fleet.lease=1s",
                "--servegate.rollouts.interval=100ms",
                "--spring.main.banner-mode=off",
                "--logging.level.root=WARN",
                "--logging.level.io.servegate.gateway.rollout=INFO");
        gateways.add(gateway);
        int queryPort = ((WebServerApplicationContext) gateway).getWebServer().getPort();
        RolloutDriver driver = new RolloutDriver(queryPort, gateway.getBean(AdminServer.class).port(),
                gateway.getBean(ObjectMapper.class));
        drivers.add(driver);
        return driver;
    }

    @AfterAll
    void stop() {
        gateways.forEach(ConfigurableApplicationContext::close);
        drivers.forEach(RolloutDriver::close);
        redis.close();
    }

    @Test
    void bothGatewaysRouteByTheSameStepAndOnlyTheOwnerDecides() throws Exception {
        RolloutDriver a = startGateway("gw-a");
        RolloutDriver b = startGateway("gw-b");
        a.deploy(MODEL, 5);
        b.awaitReady(MODEL, "1");
        b.awaitReady(MODEL, "2");
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model_name", MODEL);
        body.put("candidate_version", "2");
        body.put("steps", List.of(0.2, 0.5, 1.0));
        body.put("guards", Map.of("max_slo_miss_increase", 0.05, "max_error_rate", 0.05, "max_loss_increase", 0.05,
                "min_feedback", 50, "confidence", 0.95, "min_step_queries", 200, "min_step_ms", 0));
        String id = a.admin("start_rollout", body).get("id").asString();

        // half the traffic through each gateway up to the second step
        b.queryWithFeedbackUntil(APP, 5, () -> b.rollout(MODEL).get("step").intValue() >= 1, 10_000);
        a.queryWithFeedbackUntil(APP, 5, () -> a.rollout(MODEL).get("step").intValue() >= 1, 10_000);
        assertThat(a.rollout(MODEL).get("step").intValue()).isEqualTo(1);
        Thread.sleep(300); // a few intervals: both gateways have read the step
        for (int u = 0; u < 100; u++) {
            String uid = "both" + u;
            String expected = StickyAssignment.point(id, "uid:" + uid) < 0.5 ? "2" : "7";
            assertThat(a.predict(APP, uid, 7)).as(uid + " on gw-a").isEqualTo(expected);
            assertThat(b.predict(APP, uid, 7)).as(uid + " on gw-b").isEqualTo(expected);
        }

        b.queryWithFeedbackUntil(APP, 5, () -> !b.rollout(MODEL).get("status").asString().equals("running"),
                20_000);
        b.awaitStatus(MODEL, "promoted", Duration.ofSeconds(10));
        assertThat(a.admin("get_model", Map.of("model_name", MODEL, "model_version", "2"))
                .get("is_current_version").booleanValue()).isTrue();
        List<Double> decided = new ArrayList<>();
        for (ConfigurableApplicationContext g : gateways) {
            decided.add(g.getBean(MeterRegistry.class).find("servegate.rollout.decisions").counters().stream()
                    .mapToDouble(c -> c.count()).sum());
        }
        assertThat(decided).as("decisions taken by gw-a and gw-b").containsExactlyInAnyOrder(0.0, 4.0); // warmed, advance, advance, promote
    }
}
