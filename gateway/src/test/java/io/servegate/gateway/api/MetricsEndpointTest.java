package io.servegate.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.GatewayCalls;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * {@code GET /metrics} over real HTTP: Clipper's JSON without an Accept header (or with
 * {@code *}{@code /*} or a browser's), Prometheus text or OpenMetrics with the headers
 * Prometheus' scrapers send, a JSON 406 or 400 for headers it cannot serve, and the metrics
 * token required either way. One emulated container serves the model.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0",
    "servegate.metrics.token=" + MetricsEndpointTest.TOKEN})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MetricsEndpointTest {

    static final String TOKEN = "metrics-t0ken-for-the-endpoint-test";

    /** Prometheus 2.x's default scrape Accept header. */
    private static final String PROMETHEUS_2 = "application/openmetrics-text;version=1.0.0,"
            + "application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    /** Prometheus 3.x's default scrape Accept header. */
    private static final String PROMETHEUS_3 = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8,"
            + "application/openmetrics-text;version=0.0.1;q=0.9,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.8,"
            + "text/plain;version=0.0.4;q=0.7,*/*;q=0.6";
    private static final String BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private GatewayCalls calls;
    private ContainerProcess container;

    @BeforeAll
    void deploy() throws Exception {
        container = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "emu", "--version", "1",
                "--beta-ms", "1", "--alpha-ms", "0.1");
        calls().admin("add_app", Map.of("name", "clip", "input_type", "floats", "default_output", "none",
                "latency_slo_micros", 2_000_000));
        calls().admin("add_app", Map.of("name", "unlinked", "input_type", "floats", "default_output", "none",
                "latency_slo_micros", 2_000_000));
        calls().admin("add_model", Map.of("model_name", "emu", "model_version", "1", "input_type", "floats"));
        calls().admin("add_model_links", Map.of("app_name", "clip", "model_names", List.of("emu")));
        calls().admin("add_container", Map.of("model_name", "emu", "model_version", "1", "address",
                container.address()));
        calls().awaitAvailable();
    }

    @AfterAll
    void stop() throws Exception {
        container.close();
    }

    @Test
    void jsonByDefaultInClippersShapeWithValuesThatMoveWithQueries() throws Exception {
        JsonNode before = metricsJson(null);
        assertThat(before.propertyNames()).containsExactly("counters", "ratio_counters", "meters", "histograms");
        long aggregateBefore = find(before, "counters", "internal:aggregate_num_predictions").get("count").asLong();

        // four distinct inputs reach the model; the fifth repeats one and is a cache hit
        for (float[] input : List.of(new float[] {1, 2}, new float[] {3, 4}, new float[] {5, 6}, new float[] {7, 8},
                new float[] {1, 2})) {
            JsonNode answer = calls().predict("clip", input);
            assertThat(answer.get("default").booleanValue()).as(answer.toString()).isFalse();
        }
        assertThat(calls().predict("unlinked", new float[] {9}).get("default").booleanValue()).isTrue();

        JsonNode after = metricsJson(null);
        assertThat(find(after, "counters", "app:clip:num_predictions").get("count").asLong()).isEqualTo(5);
        assertThat(find(after, "counters", "model:emu:1:num_predictions").get("count").asLong()).isEqualTo(4);
        assertThat(find(after, "counters", "internal:aggregate_num_predictions").get("count").asLong())
                .isEqualTo(aggregateBefore + 4);
        assertThat(find(after, "ratio_counters", "app:clip:default_prediction_ratio").get("ratio").asDouble())
                .isZero();
        assertThat(find(after, "ratio_counters", "app:unlinked:default_prediction_ratio").get("ratio").asDouble())
                .isEqualTo(1.0);
        assertThat(find(after, "ratio_counters", "internal:prediction_cache_hit_ratio").get("ratio").asDouble())
                .isEqualTo(0.2);

        JsonNode latency = find(after, "histograms", "app:clip:prediction_latency");
        assertThat(latency.propertyNames()).containsExactly("unit", "size", "min", "max", "mean", "std_dev", "p50",
                "p95", "p99");
        assertThat(latency.get("unit").asString()).isEqualTo("microseconds");
        assertThat(latency.get("size").asLong()).isEqualTo(5);
        double mean = latency.get("mean").asDouble();
        assertThat(mean).isPositive().isLessThan(2_000_000);
        assertThat(latency.get("p50").asDouble()).isPositive().isLessThanOrEqualTo(latency.get("p99").asDouble());
        assertThat(latency.get("max").asDouble()).isGreaterThanOrEqualTo(mean);
        // Micrometer keeps no minimum or standard deviation: NaN, as Clipper writes unknown ratios
        assertThat(latency.get("min").asString()).isEqualTo("NaN");

        JsonNode batches = find(after, "histograms", "model:emu:1:batch_size");
        assertThat(batches.get("unit").asString()).isEqualTo("queries");
        assertThat(batches.get("size").asLong()).isBetween(1L, 4L);
        assertThat(batches.get("mean").asDouble() * batches.get("size").asLong()).isCloseTo(4.0, within(1e-9));

        JsonNode throughput = find(after, "meters", "app:clip:prediction_throughput");
        assertThat(throughput.propertyNames()).containsExactly("unit", "rate", "rate_1min", "rate_5min",
                "rate_15min");
        assertThat(throughput.get("unit").asString()).isEqualTo("events per second");
        assertThat(throughput.get("rate").asDouble()).isPositive();
    }

    @Test
    void jsonForWildcardsBrowsersAndJsonItself() throws Exception {
        for (String accept : List.of("*/*", BROWSER, "application/json", "application/*",
                "text/plain;q=0.5, application/json")) {
            HttpResponse<String> r = get("/metrics", accept, TOKEN);
            assertThat(r.statusCode()).as(accept).isEqualTo(200);
            assertThat(r.headers().firstValue("Content-Type").orElseThrow()).as(accept).startsWith("application/json");
            assertThat(json.readTree(r.body()).has("histograms")).as(accept).isTrue();
        }
    }

    @Test
    void prometheusScrapersGetOpenMetricsOrTextWithTheSameSeriesAsTheActuator() throws Exception {
        for (String accept : List.of(PROMETHEUS_2, PROMETHEUS_3, "application/openmetrics-text")) {
            HttpResponse<String> r = get("/metrics", accept, TOKEN);
            assertThat(r.statusCode()).as(accept).isEqualTo(200);
            assertThat(r.headers().firstValue("Content-Type").orElseThrow()).as(accept)
                    .startsWith("application/openmetrics-text");
            assertThat(r.body()).as(accept).contains("# TYPE servegate_cache_requests counter").endsWith("# EOF\n");
        }
        for (String accept : List.of("text/plain;version=0.0.4", "text/plain", "text/*",
                "application/json;q=0.2, text/plain;version=0.0.4")) {
            HttpResponse<String> r = get("/metrics", accept, TOKEN);
            assertThat(r.statusCode()).as(accept).isEqualTo(200);
            assertThat(r.headers().firstValue("Content-Type").orElseThrow()).as(accept)
                    .startsWith("text/plain").contains("version=0.0.4");
            assertThat(r.body()).as(accept).contains("# TYPE servegate_cache_requests_total counter")
                    .doesNotContain("# EOF");
        }
        HttpResponse<String> actuator = get("/actuator/prometheus", "text/plain;version=0.0.4", TOKEN);
        assertThat(actuator.statusCode()).isEqualTo(200);
        assertThat(actuator.body()).contains("# TYPE servegate_cache_requests_total counter");
    }

    @Test
    void queriesAreTimedByTheGatewaysOwnMetersNotAlsoByTheFrameworksPerExchangeObservation() throws Exception {
        assertThat(calls().predict("clip", new float[] {11, 12}).get("default").booleanValue()).isFalse();
        HttpResponse<String> r = get("/metrics", "text/plain;version=0.0.4", TOKEN);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("servegate_request_latency_seconds_count{app=\"clip\"")
                .doesNotContain("http_server_requests");
    }

    @Test
    void eachAppIsChargedTheModelTimeOfItsBatches() throws Exception {
        double before = modelSeconds("clip");
        for (int i = 0; i < 3; i++) {
            assertThat(calls().predict("clip", new float[] {21, i}).get("default").booleanValue()).isFalse();
        }
        // each batch takes at least beta + alpha = 1.1 ms of the container's time, all of it the app's
        assertThat(modelSeconds("clip") - before).isGreaterThanOrEqualTo(3 * 0.0011);
        assertThat(modelSeconds("unlinked")).isZero();
    }

    @Test
    void aPipelinesStagesAreChargedToThePipelineAsAnAppOfItsOwn() throws Exception {
        calls().admin("add_pipeline", Map.of("name", "clip-pipe", "input_type", "floats", "default_output", "none",
                "latency_slo_micros", 2_000_000, "stages", List.of(Map.of("name", "only", "model", "emu"))));
        double before = modelSeconds("clip-pipe");
        for (int i = 0; i < 3; i++) {
            assertThat(calls().predict("clip-pipe", new float[] {31, i}).get("default").booleanValue()).isFalse();
        }
        assertThat(modelSeconds("clip-pipe") - before).isGreaterThanOrEqualTo(3 * 0.0011);
        assertThat(modelSeconds("")).as("nothing charged to the anonymous tenant").isZero();
    }

    /** {@code servegate_model_time_seconds_total} of {@code app} on model emu:1; 0 without the series. */
    private double modelSeconds(String app) throws Exception {
        HttpResponse<String> r = get("/metrics", "text/plain;version=0.0.4", TOKEN);
        assertThat(r.statusCode()).isEqualTo(200);
        String series = "servegate_model_time_seconds_total{app=\"" + app + "\",model=\"emu\",version=\"1\"} ";
        return r.body().lines().filter(l -> l.startsWith(series)).mapToDouble(l -> Double.parseDouble(
                l.substring(series.length()).trim())).sum();
    }

    @Test
    void acceptHeadersItCannotServeGetJsonErrors() throws Exception {
        HttpResponse<String> unacceptable = get("/metrics", "image/png", TOKEN);
        assertThat(unacceptable.statusCode()).isEqualTo(406);
        assertThat(json.readTree(unacceptable.body()).get("error").asString()).isEqualTo("not acceptable");
        assertThat(json.readTree(unacceptable.body()).get("cause").asString()).contains("application/json");

        HttpResponse<String> malformed = get("/metrics", "text/plain;q=lots", TOKEN);
        assertThat(malformed.statusCode()).isEqualTo(400);
        assertThat(json.readTree(malformed.body()).get("error").asString()).isEqualTo("bad request");
    }

    @Test
    void theMetricsTokenIsStillRequiredForEitherFormat() throws Exception {
        for (String accept : new String[] {null, PROMETHEUS_2, "text/plain;version=0.0.4"}) {
            assertThat(get("/metrics", accept, null).statusCode()).as(accept).isEqualTo(401);
            assertThat(get("/metrics", accept, "wrong").statusCode()).as(accept).isEqualTo(401);
        }
    }

    private JsonNode metricsJson(String accept) throws Exception {
        HttpResponse<String> r = get("/metrics", accept, TOKEN);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/json");
        return json.readTree(r.body());
    }

    /** The fields of the one-key entry {@code name} in a category list, as Clipper nests them. */
    private static JsonNode find(JsonNode report, String category, String name) {
        for (JsonNode entry : report.get(category)) {
            if (entry.has(name)) {
                assertThat(entry.size()).isEqualTo(1);
                return entry.get(name);
            }
        }
        throw new AssertionError("no " + name + " in " + category + ": " + report.get(category));
    }

    /**
     * {@code Servegate-Debug: true} names the scheduling gateway only to a caller with the metrics
     * token; from anyone else (no token, a wrong one, a malformed header) it is ignored and the
     * query answered as usual.
     */
    @Test
    void theDebugHeaderAnswersOnlyATokenHolder() throws Exception {
        for (String authorization : new String[] {null, "Bearer wrong-token", "Basic " + TOKEN, "Bearer " + TOKEN}) {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + queryPort + "/clip/predict"))
                    .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
                    .header(ScheduledByHeader.DEBUG, "true")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"input\":[1,2]}"));
            if (authorization != null) {
                b.header("Authorization", authorization);
            }
            HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as("%s: %s", authorization, r.body()).isEqualTo(200);
            assertThat(json.readTree(r.body()).get("default").booleanValue()).as(r.body()).isFalse();
            if (("Bearer " + TOKEN).equals(authorization)) {
                assertThat(r.headers().firstValue(ScheduledByHeader.SCHEDULED_BY)).hasValue("emu:1=solo");
            } else {
                assertThat(r.headers().firstValue(ScheduledByHeader.SCHEDULED_BY)).as(authorization).isEmpty();
            }
        }
    }

    private HttpResponse<String> get(String path, String accept, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + queryPort + path))
                .timeout(Duration.ofSeconds(10));
        if (accept != null) {
            b.header("Accept", accept);
        }
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private GatewayCalls calls() {
        if (calls == null) {
            calls = new GatewayCalls(queryPort, adminServer.port(), json);
        }
        return calls;
    }
}
