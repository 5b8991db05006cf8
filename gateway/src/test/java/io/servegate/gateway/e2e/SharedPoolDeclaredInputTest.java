package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.GatewayCalls;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * Two model versions placed on one pool of multi-model replicas (the emulated container, in its
 * own process), whose container declares each model's input (four floats) in its OIP metadata:
 * an input of another length is refused with 400 naming both lengths before it is queued, as for
 * a model on replicas of its own, so it never reaches (and fails) a batch of the pool; the right
 * length is predicted; and each model's OIP metadata shows the declared shape.
 */
@DirtiesContext
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "servegate.admin.port=0")
class SharedPoolDeclaredInputTest {

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    @Test
    void inputsOfPooledModelsAreCheckedAgainstWhatTheirContainersDeclare() throws Exception {
        try (ContainerProcess container = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "w",
                "--version", "1", "--models", "2", "--load-ms", "10", "--model-size-bytes", "100",
                "--memory-budget-bytes", "200", "--input-shape", "4", "--beta-ms", "1", "--alpha-ms", "0.1")) {
            GatewayCalls calls = new GatewayCalls(queryPort, adminServer.port(), json);
            for (int i = 0; i < 2; i++) {
                calls.admin("deploy_model", Map.of("pool", "wide", "model_name", "w-" + i, "model_version", "1",
                        "input_type", "floats", "addresses", List.of(container.address()), "memory_budget_bytes", 200,
                        "model_size_bytes", 100, "load_time_micros", 10_000));
                calls.admin("add_app", Map.of("name", "wide" + i, "input_type", "floats", "default_output", "none",
                        "latency_slo_micros", 3_000_000));
                calls.admin("add_model_links", Map.of("app_name", "wide" + i, "model_names", List.of("w-" + i)));
            }
            awaitAvailable(calls);
            for (int i = 0; i < 2; i++) {
                JsonNode good = calls.predict("wide" + i, new float[] {1, 2, 3, 4});
                assertThat(good.get("default").booleanValue()).as(good.toString()).isFalse();
                HttpResponse<String> wrong = calls.predictRaw("wide" + i, new float[] {1, 2, 3});
                assertThat(wrong.statusCode()).as(wrong.body()).isEqualTo(400);
                assertThat(json.readTree(wrong.body()).get("cause").asString())
                        .contains("has 3 elements; the model expects 4, as its containers declare");
                HttpResponse<String> metadata = calls.get("/v2/models/w-" + i);
                assertThat(json.readTree(metadata.body()).get("inputs").get(0).get("shape").toString())
                        .as(metadata.body()).isEqualTo("[-1,4]");
            }
        }
    }

    private static void awaitAvailable(GatewayCalls calls) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < until) {
            if (calls.adminGet("get_placements").get(0).get("replicas").get(0).get("available").booleanValue()) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the pool's replica did not become available");
    }
}
