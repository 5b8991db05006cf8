package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.containers.ContainerManager;
import io.servegate.gateway.containers.ContainerManagerException;
import io.servegate.gateway.containers.Deployment;
import io.servegate.gateway.containers.DeploymentSpec;
import io.servegate.gateway.testsupport.JavaCommand;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * The autoscaler acting through the real process manager on emulated containers: bad settings
 * refused with their cause, min_replicas restored, idle replicas removed after the cooldown, and
 * a scale action the platform fails retried with backoff and reported until it succeeds.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "servegate.admin.port=0", "servegate.admin.token=" + AutoscalingEndToEndTest.TOKEN,
        "servegate.containers.probe-interval=250ms", "servegate.containers.readiness-timeout=120s",
        "servegate.autoscaling.tick=250ms", "servegate.autoscaling.retry-initial=200ms"})
class AutoscalingEndToEndTest {

    static final String TOKEN = "autoscaling-e2e-token-5c2a";
    private static final List<String> COMMAND = JavaCommand.inTempDirectory("autoscaling-e2e",
            "io.servegate.containers.emulated.EmulatedContainer");

    /** The real manager, whose next {@code failures} scale actions the platform fails. */
    static final AtomicInteger FAILURES = new AtomicInteger();

    @TestConfiguration
    static class PlatformFaults {
        @Bean
        @Primary
        ContainerManager faultyContainers(@Qualifier("containerManager") ContainerManager real) {
            return new ContainerManager() {
                @Override
                public String kind() {
                    return real.kind();
                }

                @Override
                public Mono<Deployment> deploy(DeploymentSpec spec) {
                    return real.deploy(spec);
                }

                @Override
                public Mono<Deployment> setReplicas(String model, String version, int replicas) {
                    return FAILURES.getAndUpdate(n -> Math.max(0, n - 1)) > 0
                            ? Mono.error(new ContainerManagerException(ContainerManagerException.Kind.PLATFORM,
                                    "injected platform failure"))
                            : real.setReplicas(model, version, replicas);
                }

                @Override
                public Mono<List<Deployment>> list() {
                    return real.list();
                }

                @Override
                public Mono<Void> remove(String model, String version) {
                    return real.remove(model, version);
                }

                @Override
                public void close() {
                    // the real manager is a bean of its own, closed by the context
                }
            };
        }
    }

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    @Autowired
    MeterRegistry meters;

    @DynamicPropertySource
    static void allowTheContainerCommand(DynamicPropertyRegistry properties) {
        JavaCommand.allow(properties, COMMAND);
    }

    @Test
    void scalesThroughTheProcessManagerAndRetriesAFailedAction() throws Exception {
        WebClient admin = WebClient.builder().baseUrl("http://127.0.0.1:" + adminServer.port())
                .defaultHeader("Authorization", "Bearer " + TOKEN).build();
        call(admin, "deploy_model", Map.of("model_name", "emu", "model_version", "1", "input_type", "floats",
                "command", COMMAND, "num_replicas", 1), 200);
        call(admin, "add_model", Map.of("model_name", "idle", "model_version", "1", "input_type", "floats"), 200);

        // bad settings: each a 4xx naming its cause
        assertThat(cause(call(admin, "set_autoscaling", Map.of("model_name", "emu", "min_replicas", 3,
                "max_replicas", 2), 400))).contains("min_replicas (3) must not exceed max_replicas (2)");
        assertThat(cause(call(admin, "set_autoscaling", Map.of("model_name", "emu", "min_replicas", 0,
                "max_replicas", 2), 400))).contains("min_replicas must be >= 1");
        assertThat(cause(call(admin, "set_autoscaling", Map.of("model_name", "nope", "min_replicas", 1,
                "max_replicas", 2), 404))).contains("unknown model 'nope'");
        assertThat(cause(call(admin, "set_autoscaling", Map.of("model_name", "emu", "min_replicas", 1,
                "max_replicas", 2, "policy", "magic"), 400))).contains("known are envelope, signals");
        assertThat(cause(call(admin, "set_autoscaling", Map.of("model_name", "emu", "min_replicas", 1,
                "max_replicas", 1000), 400))).contains("max_replicas' must be at most");
        assertThat(cause(call(admin, "set_autoscaling", Map.of("model_name", "idle", "min_replicas", 1,
                "max_replicas", 2), 409))).contains("not deployed by the process container manager");

        // min_replicas 2: restored at once, through the manager
        JsonNode set = call(admin, "set_autoscaling", Map.of("model_name", "emu", "min_replicas", 2,
                "max_replicas", 3, "cooldown_s", 2), 200);
        assertThat(set.get("replicas").intValue()).isEqualTo(1);
        awaitDeployment(admin, d -> d.get("ready_replicas").intValue() == 2, "two ready replicas");
        JsonNode state = awaitAutoscaling(admin, s -> lastDecision(s, "min_replicas", "applied"), "min_replicas applied");
        assertThat(state.get("replicas").intValue()).isEqualTo(2);
        assertThat(state.get("signals").get("envelope_max_arrivals_by_window_s")).hasSize(9);

        // no traffic: both replicas sit idle, and after the cooldown one goes
        call(admin, "set_autoscaling", Map.of("model_name", "emu", "min_replicas", 1, "max_replicas", 3,
                "cooldown_s", 2, "idle_threshold", 0.5), 200);
        awaitAutoscaling(admin, s -> lastDecision(s, "idle", "applied"), "idle replicas removed");
        awaitDeployment(admin, d -> d.get("num_replicas").intValue() == 1 && d.get("ready_replicas").intValue() == 1,
                "one replica left");

        // the platform fails the next two actions: retried with backoff, reported, then applied
        FAILURES.set(2);
        call(admin, "set_autoscaling", Map.of("model_name", "emu", "min_replicas", 2, "max_replicas", 3), 200);
        JsonNode failing = awaitAutoscaling(admin, s -> s.get("failures_in_a_row").intValue() >= 1,
                "a failed action reported");
        assertThat(failing.get("last_error").asString()).contains("injected platform failure");
        awaitAutoscaling(admin, s -> lastDecision(s, "min_replicas", "applied")
                && s.get("failures_in_a_row").intValue() == 0, "the action applied on retry");
        awaitDeployment(admin, d -> d.get("ready_replicas").intValue() == 2, "two ready replicas again");
        assertThat(meters.get("servegate.autoscaler.failures").tag("model", "emu").counter().count()).isEqualTo(2);

        // turned off: the replicas stay
        JsonNode off = call(admin, "set_autoscaling", Map.of("model_name", "emu", "enabled", false), 200);
        assertThat(off.get("was_enabled").booleanValue()).isTrue();
        assertThat(call(admin, "get_autoscaling", Map.of(), 200)).isEmpty();
        call(admin, "set_num_replicas", Map.of("model_name", "emu", "model_version", "1", "num_replicas", 0), 200);
    }

    private static boolean lastDecision(JsonNode state, String reason, String outcome) {
        JsonNode d = state.get("decisions");
        return d.size() > 0 && d.get(d.size() - 1).get("reason").asString().equals(reason)
                && d.get(d.size() - 1).get("outcome").asString().equals(outcome);
    }

    private static String cause(JsonNode error) {
        return error.get("cause").asString();
    }

    private JsonNode awaitAutoscaling(WebClient admin, Predicate<JsonNode> condition, String what)
            throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        JsonNode last = null;
        while (System.nanoTime() < until) {
            last = call(admin, "get_autoscaling", Map.of("model_name", "emu"), 200).get(0);
            if (condition.test(last)) {
                return last;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("timed out waiting for " + what + ": " + last);
    }

    private JsonNode awaitDeployment(WebClient admin, Predicate<JsonNode> condition, String what)
            throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        JsonNode last = null;
        while (System.nanoTime() < until) {
            last = json.readTree(admin.get().uri("/admin/get_deployments").retrieve().bodyToMono(String.class)
                    .block(Duration.ofSeconds(10)));
            for (JsonNode d : last) {
                if (d.get("model_name").asString().equals("emu") && condition.test(d)) {
                    return d;
                }
            }
            Thread.sleep(100);
        }
        throw new AssertionError("timed out waiting for " + what + ": " + last);
    }

    private JsonNode call(WebClient admin, String endpoint, Map<String, ?> body, int status) {
        ClientResponse response = admin.post().uri("/admin/" + endpoint).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body).exchangeToMono(r -> r.bodyToMono(String.class).defaultIfEmpty("{}")
                        .map(text -> ClientResponse.create(r.statusCode()).body(text).build()))
                .block(Duration.ofSeconds(30));
        String text = response.bodyToMono(String.class).block();
        assertThat(response.statusCode().value()).as("%s -> %s", endpoint, text).isEqualTo(status);
        return json.readTree(text);
    }
}
