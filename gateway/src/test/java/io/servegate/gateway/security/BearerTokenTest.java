package io.servegate.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.api.AdminServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * With {@code servegate.admin.token} set, every admin endpoint and every metrics endpoint answers
 * 401 (JSON error, {@code WWW-Authenticate}) unless the request carries the token; the query API
 * and the health probes stay open. The admin API is bound to all interfaces here, which the
 * token makes allowed.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0",
    "servegate.admin.address=0.0.0.0",
    "servegate.admin.token=" + BearerTokenTest.TOKEN})
class BearerTokenTest {

    static final String TOKEN = "t0ken-with-enough-entropy-4f9c2e";

    private static final List<String> ADMIN_POSTS = List.of("add_app", "delete_app", "add_model", "set_model_version",
            "delete_versioned_model", "add_model_links", "delete_model_links", "add_container", "delete_container",
            "get_all_applications", "get_application", "get_linked_models", "get_all_models", "get_model",
            "get_all_containers", "no_such_endpoint");

    /** Spellings a router still matches as /metrics or an actuator endpoint. */
    private static final List<String> METRICS_PATHS = List.of("/metrics", "/actuator/prometheus", "/actuator/metrics",
            "/actuator", "/actuator/info", "/Metrics", "/metrics;x=1", "//metrics", "/%6Detrics",
            "/actuator;a=b/prometheus", "/actuator/%70rometheus");

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @Test
    void everyAdminEndpointNeedsTheToken() throws Exception {
        for (String endpoint : ADMIN_POSTS) {
            String path = "/admin/" + endpoint;
            assertUnauthorized(post(adminServer.port(), path, null), false);
            assertUnauthorized(post(adminServer.port(), path, "Bearer wrong"), true);
            assertUnauthorized(post(adminServer.port(), path, "Bearer " + TOKEN + "x"), true);
            assertUnauthorized(post(adminServer.port(), path, "Basic " + TOKEN), true);
            assertUnauthorized(post(adminServer.port(), path, TOKEN), true);
            assertThat(post(adminServer.port(), path, "Bearer " + TOKEN).statusCode()).as(path).isNotEqualTo(401);
        }
        assertUnauthorized(get(adminServer.port(), "/admin/ping", null), false);
        assertThat(get(adminServer.port(), "/admin/ping", "Bearer " + TOKEN).statusCode()).isEqualTo(200);
        assertThat(get(adminServer.port(), "/admin/ping", "bearer " + TOKEN).statusCode()).isEqualTo(200);
        HttpResponse<String> apps = post(adminServer.port(), "/admin/get_all_applications", "Bearer " + TOKEN);
        assertThat(apps.statusCode()).isEqualTo(200);
        assertThat(json.readTree(apps.body()).isArray()).isTrue();
    }

    @Test
    void metricsEndpointsNeedTheTokenHealthAndQueriesDoNot() throws Exception {
        for (String path : METRICS_PATHS) {
            assertUnauthorized(get(queryPort, path, null), false);
            assertUnauthorized(get(queryPort, path, "Bearer nope"), true);
        }
        assertThat(get(queryPort, "/metrics", "Bearer " + TOKEN).statusCode()).isEqualTo(200);
        HttpResponse<String> prometheus = get(queryPort, "/actuator/prometheus", "Bearer " + TOKEN);
        assertThat(prometheus.statusCode()).isEqualTo(200);
        assertThat(prometheus.body()).contains("jvm_");
        assertThat(get(queryPort, "/actuator/health", null).statusCode()).isEqualTo(200);
        assertThat(get(queryPort, "/v2/health/ready", null).statusCode()).isEqualTo(200);
        assertThat(post(queryPort, "/no-such-app/predict", null).statusCode()).isEqualTo(404);
    }

    private void assertUnauthorized(HttpResponse<String> r, boolean invalidToken) {
        assertThat(r.statusCode()).as(r.uri() + " " + r.body()).isEqualTo(401);
        JsonNode body = json.readTree(r.body());
        assertThat(body.path("error").asString()).isEqualTo("unauthorized");
        assertThat(body.path("cause").asString()).isNotBlank();
        String challenge = r.headers().firstValue("WWW-Authenticate").orElseThrow();
        assertThat(challenge).startsWith("Bearer realm=");
        assertThat(challenge.contains("invalid_token")).as(challenge).isEqualTo(invalidToken);
    }

    private HttpResponse<String> post(int port, String path, String authorization)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{}"));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(int port, String path, String authorization)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).GET();
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
