package io.servegate.gateway.bench;

import io.servegate.sdk.ModelContainer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.client.HttpClient;

/**
 * The feedback-throughput benchmark's HTTP side of the gateway: registering the app, posting
 * bodies, and reading the counters it checks each phase by from {@code /metrics}.
 */
final class FeedbackGatewayClient {

    /** An answer: its HTTP status (-1: no answer) and body. */
    record Response(int status, String body) {
    }

    private final HttpClient http;
    private final int queryPort;

    FeedbackGatewayClient(HttpClient http, int queryPort) {
        this.http = http;
        this.queryPort = queryPort;
    }

    int queryPort() {
        return queryPort;
    }

    /** App {@code app}, exp4 over {@code models} (one container each), SLO {@code sloMicros}; waits until all are ready. */
    void register(int adminPort, String app, List<String> models, List<ModelContainer<float[], String>> containers,
            long sloMicros) throws Exception {
        for (int i = 0; i < models.size(); i++) {
            String m = models.get(i);
            admin(adminPort, "add_model", Map.of("model_name", m, "model_version", "1", "input_type", "floats"));
            admin(adminPort, "add_container", Map.of("model_name", m, "model_version", "1",
                    "address", "127.0.0.1:" + containers.get(i).port()));
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", app);
        body.put("input_type", "floats");
        body.put("default_output", "-1");
        body.put("latency_slo_micros", sloMicros);
        body.put("selection_policy", "exp4");
        admin(adminPort, "add_app", body);
        admin(adminPort, "add_model_links", Map.of("app_name", app, "model_names", models));
        for (String m : models) {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (get(queryPort, "/v2/models/" + m + "/ready").status() != 200) {
                if (System.nanoTime() > until) {
                    throw new IllegalStateException(m + " did not become ready through the gateway");
                }
                Thread.sleep(50);
            }
        }
    }

    private void admin(int port, String endpoint, Map<String, ?> body) {
        Response r = post(port, "/admin/" + endpoint, BenchOutput.json(body).getBytes(StandardCharsets.UTF_8))
                .block(Duration.ofSeconds(30));
        if (r == null || r.status() != 200) {
            throw new IllegalStateException("admin " + endpoint + " → " + r);
        }
    }

    /** POSTs {@code body} to the query port. */
    Mono<Response> post(String path, byte[] body) {
        return post(queryPort, path, body);
    }

    private Mono<Response> post(int port, String path, byte[] body) {
        return http.post().uri("http://127.0.0.1:" + port + path)
                .send(ByteBufFlux.fromInbound(Mono.just(body)))
                .responseSingle((res, buf) -> buf.asString(StandardCharsets.UTF_8).defaultIfEmpty("")
                        .map(s -> new Response(res.status().code(), s)));
    }

    /** A GET asking for Prometheus text (what /metrics answers otherwise is Clipper's JSON). */
    private Response get(int port, String path) {
        return http.headers(h -> h.set("Accept", "text/plain;version=0.0.4")).get()
                .uri("http://127.0.0.1:" + port + path)
                .responseSingle((res, buf) -> buf.asString(StandardCharsets.UTF_8).defaultIfEmpty("")
                        .map(s -> new Response(res.status().code(), s)))
                .onErrorResume(e -> Mono.just(new Response(-1, e.toString())))
                .block(Duration.ofSeconds(30));
    }

    /** {hits, misses} of the gateway's prediction cache so far. */
    long[] cacheCounters() {
        Response r = get(queryPort, "/metrics");
        long[] out = new long[2];
        if (r == null || r.status() != 200) {
            return new long[] {-1, -1};
        }
        for (String line : r.body().split("\n")) {
            if (line.startsWith("servegate_cache_requests_total")) {
                long v = (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                if (line.contains("result=\"hit\"")) {
                    out[0] += v;
                } else if (line.contains("result=\"miss\"")) {
                    out[1] += v;
                }
            }
        }
        return out;
    }

    /** The gateway's feedback so far (servegate_selection_feedback_total, both kinds of join). */
    long feedbackCounter() {
        Response r = get(queryPort, "/metrics");
        long total = 0;
        for (String line : r.body().split("\n")) {
            if (line.startsWith("servegate_selection_feedback_total")) {
                total += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return total;
    }

    static String abbreviate(String s) {
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }
}
