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
 * The owner of a model version leaving a fleet of gateway processes that share one real
 * {@code redis-server}, while queries for the version keep arriving: shut down (SIGTERM), it hands
 * the version over first and no query gets a default, at the gateway that stays or at the one
 * leaving; killed ({@code kill -9}), queries at the survivor get defaults while the dead owner's
 * lease runs out and are predicted again within 5 s.
 */
class FleetFailoverTest {

    private static final ObjectMapper JSON = JsonMapper.builder().build();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void anOwnerShutDownHandsItsVersionOverWithNoDefaultAndOneKilledIsReplacedWithinSeconds() throws Exception {
        try (RedisServer redis = RedisServer.start();
                ModelContainer<float[], String> container = ModelContainer.builder(TensorType.FLOATS,
                        TensorType.STRINGS, (List<float[]> batch) -> batch.stream().map(x -> "sum=" + (x[0] + x[1]))
                                .toList()).name("sum").version("1").host("127.0.0.1").port(0).inputLength(2).build()
                        .start()) {
            List<GatewayChild> gateways = new ArrayList<>();
            try {
                for (int g = 0; g < 3; g++) {
                    gateways.add(gateway(redis, g));
                }
                String admin = gateways.get(0).adminUrl() + "/admin/";
                post(admin + "add_model", "{\"model_name\":\"sum\",\"model_version\":\"1\",\"input_type\":\"floats\"}");
                post(admin + "add_container", "{\"model_name\":\"sum\",\"model_version\":\"1\",\"address\":\"127.0.0.1:"
                        + container.port() + "\"}");
                post(admin + "add_app", "{\"name\":\"s\",\"input_type\":\"floats\",\"default_output\":\"none\","
                        + "\"latency_slo_micros\":200000}");
                post(admin + "add_model_links", "{\"app_name\":\"s\",\"model_names\":[\"sum\"]}");

                String owner = settled(gateways);
                GatewayChild leaver = ownedBy(gateways, owner);
                // names gw0 < gw1 < gw2: once the owner is gone the first of the others plans, and the
                // second learns of new owners only from its own heartbeats
                List<GatewayChild> rest = new ArrayList<>(gateways);
                rest.remove(leaver);

                // SIGTERM: queries keep coming to all three until the leaver has exited, and a second after
                leaver.terminate();
                long terminated = System.nanoTime();
                int sent = 0;
                int lost = 0;
                int refused = 0;
                long exited = -1;
                while (exited < 0 || System.nanoTime() - exited < Duration.ofSeconds(1).toNanos()) {
                    assertThat(System.nanoTime() - terminated).as("shutdown under way").isLessThan(
                            Duration.ofSeconds(30).toNanos());
                    for (GatewayChild g : rest) {
                        sent++;
                        lost += predicted(g) ? 0 : 1;
                    }
                    if (exited < 0 && leaver.isAlive()) {
                        try {
                            sent++;
                            lost += predicted(leaver) ? 0 : 1;
                        } catch (java.io.IOException closing) {
                            refused++; // its web server stopped taking requests
                        }
                    } else if (exited < 0) {
                        exited = System.nanoTime();
                    }
                    Thread.sleep(10);
                }
                JsonNode handed = fleet(rest.get(1));
                System.out.printf("FleetFailoverTest: owner %s shut down in %.2f s; %d queries, %d without a "
                        + "prediction, %d refused by the leaver's closing server; fleet now %s%n", owner,
                        (exited - terminated) / 1e9, sent, lost, refused, handed.get("versions"));
                assertThat(leaver.awaitExit(Duration.ZERO)).as("exit status after SIGTERM").isIn(0, 143);
                assertThat(lost).as("queries that got no prediction while the owner shut down").isZero();

                // kill -9 of the version's new owner
                owner = settled(rest);
                GatewayChild dead = ownedBy(rest, owner);
                GatewayChild survivor = rest.get(rest.get(0) == dead ? 1 : 0);
                dead.kill();
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

    private static GatewayChild gateway(RedisServer redis, int g) throws Exception {
        return GatewayChild.start("256m", "--servegate.registry.store=redis",
                "--servegate.registry.redis-uri=" + redis.uri(), "--servegate.oip.grpc-port=0",
                "--servegate.fleet.advertise-host=127.0.0.1", "--servegate.fleet.name=gw" + g,
                "--servegate.fleet.heartbeat=500ms", "--servegate.fleet.lease=1500ms",
                "--servegate.fleet.secret=failover",
                "--logging.level.root=WARN");
    }

    /** The owner of the one version, once all of {@code fleet} predict and agree on it. */
    private String settled(List<GatewayChild> fleet) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            assertThat(System.nanoTime()).as("fleet settled").isLessThan(until);
            JsonNode first = fleet(fleet.get(0));
            boolean agreed = first.get("members").size() == fleet.size() && first.get("versions").size() == 1;
            for (GatewayChild g : fleet) {
                agreed = agreed && fleet(g).get("versions").equals(first.get("versions")) && predicted(g);
            }
            if (agreed) {
                return first.get("versions").get(0).get("owner").asString();
            }
            Thread.sleep(100);
        }
    }

    private GatewayChild ownedBy(List<GatewayChild> fleet, String member) throws Exception {
        for (GatewayChild g : fleet) {
            if (fleet(g).get("self").asString().equals(member)) {
                return g;
            }
        }
        throw new AssertionError("no gateway is " + member);
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
