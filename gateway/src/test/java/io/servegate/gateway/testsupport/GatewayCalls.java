package io.servegate.gateway.testsupport;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/** Blocking JSON calls to a gateway under test: predictions on its query port, admin calls on its admin port. */
public final class GatewayCalls {

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final int queryPort;
    private final int adminPort;
    private final ObjectMapper json;

    public GatewayCalls(int queryPort, int adminPort, ObjectMapper json) {
        this.queryPort = queryPort;
        this.adminPort = adminPort;
        this.json = json;
    }

    /** Predicts {@code input} for {@code app}, which must answer 200. */
    public JsonNode predict(String app, float[] input) throws Exception {
        HttpResponse<String> r = predictRaw(app, input);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return json.readTree(r.body());
    }

    /** Predicts {@code input} for {@code app} and returns the answer, whatever its status. */
    public HttpResponse<String> predictRaw(String app, float[] input) throws Exception {
        return post("http://127.0.0.1:" + queryPort + "/" + app + "/predict",
                json.writeValueAsString(Map.of("input", input)));
    }

    /** GETs {@code path} on the query port and returns the answer, whatever its status. */
    public HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + queryPort + path))
                .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Calls {@code /admin/<endpoint>}, which must answer 200. */
    public void admin(String endpoint, Map<String, ?> body) throws Exception {
        HttpResponse<String> r = post("http://127.0.0.1:" + adminPort + "/admin/" + endpoint,
                json.writeValueAsString(body));
        assertThat(r.statusCode()).as(endpoint + ": " + r.body()).isEqualTo(200);
    }

    /** Calls {@code /admin/<endpoint>} with a JSON text and returns the answer, whatever its status. */
    public HttpResponse<String> adminRaw(String endpoint, String body) throws Exception {
        return post("http://127.0.0.1:" + adminPort + "/admin/" + endpoint, body);
    }

    /** Waits up to 20 s until {@code GET /v2/models/{model}/ready} answers 200. */
    public void awaitReady(String model) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + queryPort + "/v2/models/" + model
                + "/ready")).timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString())
                .statusCode() != 200) {
            assertThat(System.nanoTime()).as(model + " became ready").isLessThan(until);
            Thread.sleep(50);
        }
    }

    /** GETs {@code /admin/<endpoint>}, which must answer 200. */
    public JsonNode adminGet(String endpoint) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort
                + "/admin/" + endpoint)).timeout(Duration.ofSeconds(10)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(endpoint + ": " + r.body()).isEqualTo(200);
        return json.readTree(r.body());
    }

    /** Waits up to 20 s until a registered replica is available. */
    public void awaitAvailable() throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < until) {
            for (JsonNode c : json.readTree(post("http://127.0.0.1:" + adminPort + "/admin/get_all_containers", "{}")
                    .body())) {
                if (c.get("available").booleanValue()) {
                    return;
                }
            }
            Thread.sleep(50);
        }
        throw new AssertionError("the replica did not become available");
    }

    private HttpResponse<String> post(String url, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
