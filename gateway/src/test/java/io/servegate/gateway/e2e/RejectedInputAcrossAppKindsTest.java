package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.GatewayCalls;
import io.servegate.gateway.testsupport.HttpLoad;
import io.servegate.gateway.testsupport.HttpLoad.Outcome;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.ObjectMapper;

/**
 * An input the model containers reject (two emulated containers that raise on the value 7 and
 * report per-row errors) gets 400 with the container's message from every kind of app, as from an
 * app with one model: an exp4 app over both models, and a pipeline whose stage takes the query's
 * input. A good input is still predicted by both.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "servegate.admin.port=0", "servegate.cache.enabled=false"})
class RejectedInputAcrossAppKindsTest {

    private static final long SLO_MICROS = 2_000_000;
    private static ContainerProcess first;
    private static ContainerProcess second;

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    private final HttpLoad http = new HttpLoad();

    @BeforeAll
    static void start() throws Exception {
        first = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "reject-a", "--version", "1",
                "--fault", "raise-on-value=7");
        second = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "reject-b", "--version", "1",
                "--fault", "raise-on-value=7");
    }

    @AfterAll
    static void stop() throws Exception {
        for (ContainerProcess c : new ContainerProcess[] {first, second}) {
            if (c != null) {
                c.close();
            }
        }
    }

    @Test
    void aRejectedInputGets400FromSelectionAppsAndPipelines() throws Exception {
        register("reject-a", first);
        register("reject-b", second);
        Map<String, Object> app = new LinkedHashMap<>(Map.of("name", "ensemble", "input_type", "floats",
                "default_output", "none", "latency_slo_micros", SLO_MICROS, "selection_policy", "exp4"));
        admin("add_app", app);
        admin("add_model_links", Map.of("app_name", "ensemble", "model_names", List.of("reject-a", "reject-b")));
        admin("add_pipeline", Map.of("name", "chain", "input_type", "floats", "default_output", "none",
                "latency_slo_micros", SLO_MICROS, "stages", List.of(Map.of("name", "only", "model", "reject-a"))));

        for (String name : List.of("ensemble", "chain")) {
            Outcome good = predict(name, new float[] {1, 9, 3});
            assertThat(good.status()).as("%s, a good input: %s", name, good.body()).isEqualTo(200);
            assertThat(good.body().path("output").asString()).as(name).isEqualTo("1");
            assertThat(good.body().path("default").booleanValue()).as(name).isFalse();

            Outcome poisoned = predict(name, new float[] {1, 7, 3});
            assertThat(poisoned.status()).as("%s, a rejected input: %s", name, poisoned.body()).isEqualTo(400);
            assertThat(poisoned.body().toString()).as(name).contains("7");
        }
    }

    private Outcome predict(String app, float[] input) {
        return http.post("http://127.0.0.1:" + queryPort + "/" + app + "/predict", Map.of("input", input));
    }

    private void register(String model, ContainerProcess c) throws Exception {
        admin("add_model", Map.of("model_name", model, "model_version", "1", "input_type", "floats"));
        admin("add_container", Map.of("model_name", model, "model_version", "1", "address", c.address(),
                "container_id", model + "-1"));
        calls().awaitReady(model);
    }

    private void admin(String endpoint, Map<String, ?> body) throws Exception {
        calls().admin(endpoint, body);
    }

    private GatewayCalls calls() {
        return new GatewayCalls(queryPort, adminServer.port(), json);
    }
}
