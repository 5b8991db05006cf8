package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.GatewayCalls;
import io.servegate.oip.client.ContainerClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * The gateway in front of a real multi-model container (the emulated one, in its own process,
 * over gRPC): four models of 100 bytes each placed on a pool whose replica has a budget of 200,
 * so it holds two at a time. The replica is warmed up with a model it then unloads again, a cold
 * query loads its model and is answered, a third model evicts
 * the least recently used one (in the gateway's accounting and in the container), a model whose
 * load cannot finish within its app's SLO gets the default at once and, asked for again, is loaded
 * for the queries after, and bad placements are refused.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "servegate.admin.port=0")
class SharedPoolEndToEndTest {

    private static final long LOAD_MICROS = 300_000;

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    @Test
    void modelsLoadOnDemandAndTheLeastRecentlyUsedIsEvicted() throws Exception {
        try (ContainerProcess container = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "m",
                "--version", "1", "--models", "4", "--load-ms", "300", "--model-size-bytes", "100",
                "--memory-budget-bytes", "200", "--beta-ms", "2", "--alpha-ms", "0.1");
                ContainerClient direct = ContainerClient.connect(container.address())) {
            GatewayCalls calls = new GatewayCalls(queryPort, adminServer.port(), json);

            assertRefused(calls, Map.of("pool", "shared"), 400, "'model_name'");
            assertRefused(calls, deployBody("m-0", 2, List.of()), 400, "does not exist yet");
            Map<String, Object> tooBig = deployBody("m-0", 2, List.of(container.address()));
            tooBig.put("model_size_bytes", 201);
            assertRefused(calls, tooBig, 400, "larger than pool 'shared''s memory budget");
            Map<String, Object> withImage = deployBody("m-0", 2, List.of(container.address()));
            withImage.put("image", "x");
            assertRefused(calls, withImage, 400, "'image' deploys single-model replicas");
            Map<String, Object> noLoadTime = deployBody("m-0", 2, List.of(container.address()));
            noLoadTime.remove("load_time_micros");
            assertRefused(calls, noLoadTime, 400, "'load_time_micros'");
            assertThat(calls.adminGet("get_placements")).as("nothing placed by a refused call").isEmpty();

            for (int i = 0; i < 4; i++) {
                calls.admin("deploy_model", deployBody("m-" + i, 2, List.of(container.address())));
                // three apps with room for a load in their SLO, one without
                calls.admin("add_app", Map.of("name", "app" + i, "input_type", "floats", "default_output", "none",
                        "latency_slo_micros", i < 3 ? 3_000_000 : LOAD_MICROS / 2));
                calls.admin("add_model_links", Map.of("app_name", "app" + i, "model_names", List.of("m-" + i)));
            }
            Map<String, Object> otherPool = deployBody("m-0", 2, List.of(container.address()));
            otherPool.put("pool", "other");
            assertRefused(calls, otherPool, 409, "is placed on pool 'shared'");
            awaitAvailable(calls);
            assertThat(calls.adminGet("get_placements").get(0).get("models").toString())
                    .isEqualTo("[\"m-0:1\",\"m-1:1\",\"m-2:1\",\"m-3:1\"]");
            assertThat(held(calls)).isEqualTo("[]");
            assertThat(direct.repositoryIndex(true, Duration.ofSeconds(5)).get().getModelsList())
                    .as("the model loaded for the warm-up is unloaded again").isEmpty();

            JsonNode first = calls.predict("app0", new float[] {1, 2, 3});
            assertThat(first.get("default").booleanValue()).as(first.toString()).isFalse();
            assertThat(held(calls)).isEqualTo("[\"m-0:1\"]");
            calls.predict("app1", new float[] {1, 2, 3});
            JsonNode third = calls.predict("app2", new float[] {1, 2, 3});
            assertThat(third.get("default").booleanValue()).as(third.toString()).isFalse();
            assertThat(held(calls)).as("m-0, least recently used, made room").isEqualTo("[\"m-1:1\",\"m-2:1\"]");
            assertThat(direct.repositoryIndex(true, Duration.ofSeconds(5)).get().getModelsList().stream()
                    .map(m -> m.getName()).sorted().toList()).as("the container agrees").containsExactly("m-1", "m-2");

            long start = System.nanoTime();
            JsonNode tight = calls.predict("app3", new float[] {1, 2, 3});
            long tookMicros = (System.nanoTime() - start) / 1000;
            assertThat(tight.get("default").booleanValue()).as(tight.toString()).isTrue();
            assertThat(tight.get("default_explanation").asString()).contains("no batch could answer it");
            assertThat(tookMicros).as("the default goes out before the SLO, not after it").isLessThan(LOAD_MICROS / 2);
            assertThat(held(calls)).as("asked for once: nothing evicted for it").isEqualTo("[\"m-1:1\",\"m-2:1\"]");
            // asked for again, with the replica idle: it is loaded for the queries after
            JsonNode after = awaitPrediction(calls, "app3");
            assertThat(after.get("default").booleanValue()).as(after.toString()).isFalse();
            assertThat(held(calls)).isEqualTo("[\"m-2:1\",\"m-3:1\"]");

            JsonNode pool = calls.adminGet("get_placements").get(0);
            // app3's queries before its load was sent: two, more where the machine was slow between them
            long coldStarts = pool.get("cold_starts").longValue();
            assertThat(coldStarts).isGreaterThanOrEqualTo(5);
            assertThat(pool.get("loads").longValue()).isEqualTo(4);
            assertThat(pool.get("evictions").longValue()).isEqualTo(2);
            assertThat(pool.get("replicas").get(0).get("used_bytes").longValue()).isEqualTo(200);
            String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + queryPort + "/metrics")).header("Accept", "text/plain").GET().build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertThat(sample(metrics, "servegate_pool_cold_starts_total")).isEqualTo(coldStarts);
            assertThat(sample(metrics, "servegate_pool_loads_total")).isEqualTo(4);
            assertThat(sample(metrics, "servegate_pool_evictions_total")).isEqualTo(2);
            assertThat(sample(metrics, "servegate_pool_load_time_seconds_count")).isEqualTo(4);
            assertThat(sample(metrics, "servegate_pool_load_time_seconds_sum")).as("four loads of 300 ms")
                    .isGreaterThanOrEqualTo(1.2);
        }
    }

    /** The value of the pool's sample {@code name} in Prometheus text. */
    private static double sample(String metrics, String name) {
        return metrics.lines().filter(l -> l.startsWith(name + "{pool=\"shared\"")).findFirst()
                .map(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                .orElseThrow(() -> new AssertionError(name + " is not exported"));
    }

    private static Map<String, Object> deployBody(String model, int slots, List<String> addresses) {
        Map<String, Object> body = new HashMap<>();
        body.put("pool", "shared");
        body.put("model_name", model);
        body.put("model_version", "1");
        body.put("input_type", "floats");
        body.put("addresses", addresses);
        body.put("memory_budget_bytes", 100L * slots);
        body.put("model_size_bytes", 100);
        body.put("load_time_micros", LOAD_MICROS);
        return body;
    }

    private void assertRefused(GatewayCalls calls, Map<String, ?> body, int status, String cause) throws Exception {
        HttpResponse<String> r = calls.adminRaw("deploy_model", json.writeValueAsString(body));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        assertThat(json.readTree(r.body()).get("cause").asString()).contains(cause);
    }

    private String held(GatewayCalls calls) throws Exception {
        return calls.adminGet("get_placements").get(0).get("replicas").get(0).get("loaded").toString();
    }

    /** The first answer of {@code app} that is not a default, once its model's load has finished (within 10 s). */
    private static JsonNode awaitPrediction(GatewayCalls calls, String app) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        JsonNode answer = calls.predict(app, new float[] {1, 2, 3});
        while (answer.get("default").booleanValue() && System.nanoTime() < until) {
            Thread.sleep(50);
            answer = calls.predict(app, new float[] {1, 2, 3});
        }
        return answer;
    }

    private void awaitAvailable(GatewayCalls calls) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < until) {
            if (calls.adminGet("get_placements").get(0).get("replicas").get(0).get("available").booleanValue()) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the pool's replica did not become available");
    }
}
