package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.JavaCommand;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * {@code set_pipeline_tuning} through the real process manager on emulated containers: one
 * autoscaler per stage model, planning for the stage's budget (a plan's {@code deadline_micros},
 * or the stage's share of the split) rather than a model SLO; bad settings refused with their
 * cause, and none set when one stage's model cannot be scaled.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "servegate.admin.port=0", "servegate.admin.token=" + PipelineTuningEndToEndTest.TOKEN,
        "servegate.containers.probe-interval=250ms", "servegate.containers.readiness-timeout=120s",
        "servegate.autoscaling.tick=250ms"})
class PipelineTuningEndToEndTest {

    static final String TOKEN = "pipeline-tuning-e2e-token-81d0";
    private static final List<String> COMMAND = JavaCommand.inTempDirectory("pipeline-tuning-e2e",
            "io.servegate.containers.emulated.EmulatedContainer");

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    @DynamicPropertySource
    static void allowTheContainerCommand(DynamicPropertyRegistry properties) {
        JavaCommand.allow(properties, COMMAND);
    }

    @Test
    void tuningScalesEachStageForItsBudget() {
        WebClient admin = WebClient.builder().baseUrl("http://127.0.0.1:" + adminServer.port())
                .defaultHeader("Authorization", "Bearer " + TOKEN).build();
        for (String model : List.of("pre", "main")) {
            call(admin, "deploy_model", Map.of("model_name", model, "model_version", "1", "input_type", "floats",
                    "command", COMMAND, "num_replicas", 1), 200);
        }
        call(admin, "add_model", Map.of("model_name", "unmanaged", "model_version", "1", "input_type", "floats"), 200);
        call(admin, "add_pipeline", pipeline("planned", "pre", 20_000, "main", 60_000), 200);
        call(admin, "add_pipeline", pipeline("split", "pre", 0, "main", 0), 200);
        call(admin, "add_pipeline", pipeline("half-managed", "pre", 0, "unmanaged", 0), 200);

        // bad settings: each a 4xx naming its cause, and nothing set
        assertThat(cause(call(admin, "set_pipeline_tuning", Map.of("name", "nope", "min_replicas", 1,
                "max_replicas", 2), 404))).contains("unknown pipeline 'nope'");
        assertThat(cause(call(admin, "set_pipeline_tuning", Map.of("name", "planned", "min_replicas", 3,
                "max_replicas", 2), 400))).contains("min_replicas (3) must not exceed max_replicas (2)");
        assertThat(cause(call(admin, "set_pipeline_tuning", Map.of("name", "planned", "max_replicas", 2), 400)))
                .contains("missing field 'min_replicas'");
        assertThat(cause(call(admin, "set_pipeline_tuning", Map.of("name", "planned", "min_replicas", 1,
                "max_replicas", 1000), 400))).contains("max_replicas' must be at most");
        assertThat(cause(call(admin, "set_pipeline_tuning", Map.of("name", "planned", "enabled", "yes",
                "min_replicas", 1, "max_replicas", 2), 400))).contains("'enabled' must be true or false");
        assertThat(cause(call(admin, "set_pipeline_tuning", Map.of("name", "half-managed", "min_replicas", 1,
                "max_replicas", 2), 409))).contains("'unmanaged:1' is not deployed by the process container manager");
        assertThat(call(admin, "get_autoscaling", Map.of(), 200)).as("no stage of a refused pipeline is tuned")
                .isEmpty();

        // a plan: each stage's autoscaler plans for its deadline_micros, not the 100 ms SLO
        JsonNode planned = call(admin, "set_pipeline_tuning", Map.of("name", "planned", "min_replicas", 1,
                "max_replicas", 3, "cooldown_s", 30), 200);
        assertThat(planned.get("planned").booleanValue()).isTrue();
        Map<String, Long> budgets = budgets(planned);
        assertThat(budgets).containsExactlyInAnyOrderEntriesOf(Map.of("pre", 20_000L, "main", 60_000L));
        Map<String, Long> slos = new HashMap<>();
        for (JsonNode a : call(admin, "get_autoscaling", Map.of(), 200)) {
            slos.put(a.get("model_name").asString(), a.get("config").get("slo_micros").longValue());
            assertThat(a.get("config").get("max_replicas").intValue()).isEqualTo(3);
            assertThat(a.get("config").get("cooldown_s").doubleValue()).isEqualTo(30.0);
        }
        assertThat(slos).containsExactlyInAnyOrderEntriesOf(Map.of("pre", 20_000L, "main", 60_000L));

        // no plan: the split's shares, which add up to the end-to-end budget (SLO less the 1 ms margin)
        JsonNode split = call(admin, "set_pipeline_tuning", Map.of("name", "split", "min_replicas", 1,
                "max_replicas", 2), 200);
        assertThat(split.get("planned").booleanValue()).isFalse();
        Map<String, Long> shares = budgets(split);
        assertThat(shares.get("pre")).isPositive();
        assertThat(shares.get("main")).isPositive();
        assertThat(shares.get("pre") + shares.get("main")).isBetween(98_999L, 99_000L); // each rounded down to µs
        for (JsonNode s : split.get("stages")) {
            assertThat(s.get("autoscaler").get("config").get("slo_micros").longValue())
                    .isEqualTo(s.get("budget_micros").longValue());
        }

        // off: every stage's autoscaler goes, the replicas stay
        JsonNode off = call(admin, "set_pipeline_tuning", Map.of("name", "split", "enabled", false), 200);
        assertThat(off.get("stages")).allSatisfy(s -> assertThat(s.get("was_enabled").booleanValue()).isTrue());
        assertThat(call(admin, "get_autoscaling", Map.of(), 200)).isEmpty();
        for (String model : List.of("pre", "main")) {
            call(admin, "set_num_replicas", Map.of("model_name", model, "model_version", "1", "num_replicas", 0), 200);
        }
    }

    /** A two-stage chain under a 100 ms SLO; deadlines of 0 leave it without a plan. */
    private static Map<String, Object> pipeline(String name, String first, long firstMicros, String second,
            long secondMicros) {
        Map<String, Object> a = new HashMap<>(Map.of("name", "a", "model", first));
        Map<String, Object> b = new HashMap<>(Map.of("name", "b", "model", second));
        if (firstMicros > 0) {
            a.put("deadline_micros", firstMicros);
            b.put("deadline_micros", secondMicros);
        }
        return Map.of("name", name, "input_type", "floats", "default_output", "-1", "latency_slo_micros", 100_000,
                "stages", List.of(a, b), "edges", List.of(Map.of("from", "a", "to", "b")));
    }

    /** Each stage's budget by its model's name. */
    private static Map<String, Long> budgets(JsonNode tuning) {
        Map<String, Long> out = new HashMap<>();
        for (JsonNode s : tuning.get("stages")) {
            out.put(s.get("autoscaler").get("model_name").asString(), s.get("budget_micros").longValue());
        }
        return out;
    }

    private static String cause(JsonNode error) {
        return error.get("cause").asString();
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
