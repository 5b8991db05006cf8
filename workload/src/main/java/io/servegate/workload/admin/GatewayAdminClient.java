package io.servegate.workload.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small blocking client of the gateway's Clipper-style admin API (registration, status, profiles
 * and plans; never on a measured path), used by the load generator and the simulator.
 */
public final class GatewayAdminClient {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient http;
    private final String base;
    private final Duration timeout;
    /** The admin bearer token, or null to send none (a loopback admin port needs none). */
    private final String token;

    /** A client of the admin server at {@code host:port} that sends no token. */
    public GatewayAdminClient(String host, int port, Duration timeout) {
        this("http://" + host + ":" + port, null, timeout);
    }

    /**
     * @param url   the admin server, e.g. {@code http://127.0.0.1:1338}
     * @param token the admin bearer token, or null
     * @param timeout how long to wait to connect and for each answer
     */
    public GatewayAdminClient(String url, String token, Duration timeout) {
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(timeout).build();
        this.base = url.replaceAll("/+$", "") + "/admin/";
        this.timeout = timeout;
        this.token = token;
    }

    private HttpRequest.Builder request(String endpoint) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + endpoint)).timeout(timeout);
        return token == null ? b : b.header("Authorization", "Bearer " + token);
    }

    /** Whether {@code GET /admin/ping} answers 200 (false on any failure, e.g. not listening yet). */
    public boolean ping() throws InterruptedException {
        try {
            HttpRequest r = request("ping").GET().build();
            return http.send(r, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false;
        }
    }

    /** {@code POST /admin/<endpoint>} with a JSON body; the JSON answer. */
    public JsonNode post(String endpoint, Object body) throws IOException, InterruptedException {
        return send(endpoint, request(endpoint)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body)))
                .build());
    }

    /** {@code GET /admin/<endpoint>}; the JSON answer. */
    public JsonNode get(String endpoint) throws IOException, InterruptedException {
        return send(endpoint, request(endpoint).GET().build());
    }

    private JsonNode send(String endpoint, HttpRequest request) throws IOException, InterruptedException {
        HttpResponse<String> response;
        try {
            response = http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IOException("cannot reach the gateway at " + base + endpoint + ": "
                    + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()), e);
        }
        if (response.statusCode() / 100 != 2) {
            throw new IOException("admin " + endpoint + " answered HTTP " + response.statusCode() + ": "
                    + response.body());
        }
        return JSON.readTree(response.body());
    }

    /** Clipper's {@code add_app}. */
    public void addApp(String name, String inputType, String defaultOutput, long latencySloMicros)
            throws IOException, InterruptedException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", name);
        body.put("input_type", inputType);
        body.put("default_output", defaultOutput);
        body.put("latency_slo_micros", latencySloMicros);
        post("add_app", body);
    }

    /** Clipper's {@code add_model}; {@code batchSize} -1 lets AIMD choose it. */
    public void addModel(String name, String version, String inputType, int batchSize)
            throws IOException, InterruptedException {
        addModel(name, version, inputType, batchSize, null);
    }

    /**
     * {@code add_model} with the model's scheduling policy ({@code clipper}, {@code clockwork} or
     * {@code symphony}); null leaves it to the gateway's default.
     */
    public void addModel(String name, String version, String inputType, int batchSize, String scheduler)
            throws IOException, InterruptedException {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model_name", name);
        body.put("model_version", version);
        body.put("input_type", inputType);
        body.put("batch_size", batchSize);
        if (scheduler != null) {
            body.put("scheduler", scheduler);
        }
        post("add_model", body);
    }

    /** Clipper's {@code add_model_links}. */
    public void addModelLinks(String app, List<String> models) throws IOException, InterruptedException {
        post("add_model_links", Map.of("app_name", app, "model_names", models));
    }

    /** {@code add_container}: a replica the gateway did not start, at {@code host:port}; its id. */
    public String addContainer(String model, String version, String address) throws IOException, InterruptedException {
        JsonNode answer = post("add_container", Map.of("model_name", model, "model_version", version, "address",
                address));
        return answer.path("container_id").asText(null);
    }

    /** {@code get_all_containers}: one object per replica (available, queue_length, max_batch_size, circuit...). */
    public JsonNode allContainers() throws IOException, InterruptedException {
        return post("get_all_containers", Map.of());
    }

    /** The replica {@code containerId}'s status, or null if the gateway does not list it. */
    public JsonNode container(String containerId) throws IOException, InterruptedException {
        for (JsonNode c : allContainers()) {
            if (containerId.equals(c.path("container_id").asText())) {
                return c;
            }
        }
        return null;
    }

    /** Waits until the gateway lists replica {@code containerId} as available. */
    public void awaitAvailable(String containerId, Duration within) throws IOException, InterruptedException {
        long until = System.nanoTime() + within.toNanos();
        JsonNode last = null;
        while (System.nanoTime() < until) {
            last = container(containerId);
            if (last != null && last.path("available").asBoolean(false)) {
                return;
            }
            Thread.sleep(50);
        }
        throw new IOException("replica " + containerId + " was not available within " + within + "; last status: "
                + last);
    }

    /** Waits until the gateway lists at least {@code replicas} available replicas of {@code model}. */
    public void awaitAvailableReplicas(String model, int replicas, Duration within)
            throws IOException, InterruptedException {
        long until = System.nanoTime() + within.toNanos();
        long available = 0;
        while (System.nanoTime() < until) {
            available = 0;
            for (JsonNode c : allContainers()) {
                if (model.equals(c.path("model_name").asText()) && c.path("available").asBoolean(false)) {
                    available++;
                }
            }
            if (available >= replicas) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IOException(replicas + " replicas of " + model + " were not available within " + within + "; "
                + available + " were");
    }
}
