package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.testsupport.GatewayChild;
import io.servegate.gateway.testsupport.RedisServer;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code kill -9} of the gateway that owns a model version, in a fleet of two gateway processes
 * sharing one real {@code redis-server}: queries for the version keep arriving at the survivor,
 * get defaults while the dead owner's lease runs out, and are predicted again within 5 s.
 */
class FleetFailoverTest {

    private static final ObjectMapper JSON = JsonMapper.builder().build();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void predictionsResumeWithinSecondsAfterTheOwnerIsKilled() throws Exception {
        try (RedisServer redis = RedisServer.start();
                ModelContainer<float[], String> container = ModelContainer.builder(TensorType.FLOATS,
                        TensorType.STRINGS, (List<float[]> batch) -> batch.stream().map(x -> "sum=" + (x[0] + x[1]))
                                .toList()).name("sum").version("1").host("127.0.0.1").port(0).inputLength(2).build()
                        .start()) {
            List<GatewayChild> gateways = new ArrayList<>();
            try {
                for (int g = 0; g < 2; g++) {
                    gateways.add(GatewayChild.start("256m", "--servegate.registry.store=redis",
                            "--servegate.registry.redis-uri=" + redis.uri(), "--servegate.oip.grpc-port=0",
                            "--servegate.fleet.advertise-host=127.0.0.1", "--servegate.fleet.name=gw" + g,
                            "--servegate.fleet.heartbeat=200ms", "--servegate.fleet.lease=1s",
                            "--servegate.fleet.secret=failover",
                            "--logging.level.root=WARN"));
                }
                String admin = gateways.get(0).adminUrl() + "/admin/";
                post(admin + "add_model", "{\"model_name\":\"sum\",\"model_version\":\"1\",\"input_type\":\"floats\"}");
                post(admin + "add_container", "{\"model_name\":\"sum\",\"model_version\":\"1\",\"address\":\"127.0.0.1:"
                        + container.port() + "\"}");
                post(admin + "add_app", "{\"name\":\"s\",\"input_type\":\"floats\",\"default_output\":\"none\","
                        + "\"latency_slo_micros\":200000}");
                post(admin + "add_model_links", "{\"app_name\":\"s\",\"model_names\":[\"sum\"]}");

                // both gateways predict, and agree on the owner
                String owner = null;
                long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (owner == null) {
                    assertThat(System.nanoTime()).as("fleet settled").isLessThan(until);
                    JsonNode a = fleet(gateways.get(0));
                    JsonNode b = fleet(gateways.get(1));
                    if (a.get("members").size() == 2 && a.get("versions").size() == 1 && a.get("versions")
                            .equals(b.get("versions")) && predicted(gateways.get(0)) && predicted(gateways.get(1))) {
                        owner = a.get("versions").get(0).get("owner").asString();
                    }
                    Thread.sleep(100);
                }
                int dead = fleet(gateways.get(0)).get("self").asString().equals(owner) ? 0 : 1;
                GatewayChild survivor = gateways.get(1 - dead);

                gateways.get(dead).kill();
                long killed = System.nanoTime();
                long resumed = -1;
                int defaults = 0;
                int answered = 0;
                while (System.nanoTime() - killed < Duration.ofSeconds(15).toNanos()) {
                    boolean ok = predicted(survivor);
                    answered++;
                    if (ok && resumed < 0) {
                        resumed = System.nanoTime();
                    } else if (!ok) {
                        defaults++;
                    }
                    if (resumed > 0 && System.nanoTime() - resumed > Duration.ofSeconds(1).toNanos()) {
                        break;
                    }
                    Thread.sleep(20);
                }
                JsonNode after = fleet(survivor);
                System.out.printf("FleetFailoverTest: owner %s killed; %d queries to the survivor, %d defaults; "
                        + "predicted again %.2f s after the kill; fleet now %s%n", owner, answered, defaults,
                        resumed < 0 ? Double.NaN : (resumed - killed) / 1e9, after.get("versions"));
                assertThat(resumed).as("predictions resumed").isPositive();
                assertThat((resumed - killed) / 1e9).as("seconds to resume").isLessThan(5.0);
                assertThat(after.get("members")).hasSize(1);
                assertThat(after.get("versions").get(0).get("owner").asString()).isEqualTo(
                        after.get("self").asString());
            } finally {
                for (GatewayChild g : gateways) {
                    g.close();
                }
            }
        }
    }

    private boolean predicted(GatewayChild g) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(g.url() + "/s/predict"))
                .timeout(Duration.ofSeconds(5)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"input\":[1,2]}")).build(),
                HttpResponse.BodyHandlers.ofString());
        return r.statusCode() == 200 && "sum=3.0".equals(JSON.readTree(r.body()).path("output").asString());
    }

    private JsonNode fleet(GatewayChild g) throws Exception {
        return JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(g.adminUrl() + "/admin/get_fleet")).build(),
                HttpResponse.BodyHandlers.ofString()).body());
    }

    private void post(String url, String body) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as("%s → %s", url, r.body()).isEqualTo(200);
    }
}
