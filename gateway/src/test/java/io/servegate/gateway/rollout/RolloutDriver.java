package io.servegate.gateway.rollout;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.containers.emulated.EmulatedPredictor;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import io.servegate.sdk.Predictor;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * Drives a gateway under a rollout: queries of one-hot inputs (class {@code i} of 10, which the
 * emulated container labels {@code i} when it has 10 classes) from distinct uids, each followed
 * by its true label as feedback, from several threads; the admin calls; and the containers:
 * emulated, in-process on loopback gRPC, labelling a one-hot input of class {@code i} with
 * {@code i mod classes}.
 */
final class RolloutDriver implements AutoCloseable {

    static final int CLASSES = 10;
    /** Generous for a loaded shared machine: the SLO guard is not what these tests are about. */
    static final long SLO_MICROS = 2_000_000;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final ExecutorService threads = Executors.newFixedThreadPool(8);
    private final String query;
    private final String admin;
    private final ObjectMapper json;
    private final AtomicLong sent = new AtomicLong();
    private final List<ModelContainer<float[], String>> containers = new ArrayList<>();

    RolloutDriver(int queryPort, int adminPort, ObjectMapper json) {
        this.query = "http://127.0.0.1:" + queryPort;
        this.admin = "http://127.0.0.1:" + adminPort + "/admin/";
        this.json = json;
    }

    static float[] oneHot(int i) {
        float[] x = new float[CLASSES];
        x[i] = 1;
        return x;
    }

    /** Queries the app as {@code uid}, input class {@code i}; returns the output, which must not be the default. */
    String predict(String app, String uid, int i) throws Exception {
        JsonNode n = answer(app, uid, i);
        assertThat(n.get("default").booleanValue()).as(n.toString()).isFalse();
        return n.get("output").asString();
    }

    /**
     * Waits until the app answers a prediction (up to 20 s): a gateway that joined a fleet forwards to
     * the version's former owner until that owner's lease runs out and the version is granted again.
     */
    void awaitPrediction(String app) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        JsonNode n = answer(app, "await", 0);
        while (n.get("default").booleanValue()) {
            assertThat(System.nanoTime()).as("a prediction from " + app + "; last " + n).isLessThan(until);
            Thread.sleep(50);
            n = answer(app, "await", 0);
        }
    }

    /** Queries the app as {@code uid}, input class {@code i}; returns the answer, a prediction or the default. */
    JsonNode answer(String app, String uid, int i) throws Exception {
        HttpResponse<String> r = post(query + "/" + app + "/predict",
                "{\"uid\":\"" + uid + "\",\"input\":" + json.writeValueAsString(oneHot(i)) + "}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return json.readTree(r.body());
    }

    /** Sends the true label {@code i} of class {@code i}'s input as {@code uid}. */
    JsonNode feedback(String app, String uid, int i) throws Exception {
        HttpResponse<String> r = post(query + "/" + app + "/update",
                "{\"uid\":\"" + uid + "\",\"input\":" + json.writeValueAsString(oneHot(i)) + ",\"label\":" + i + "}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return json.readTree(r.body());
    }

    /**
     * Infers class {@code i}'s input over the Open Inference Protocol's REST binding, one row, at
     * {@code /v2/models/<model>/infer} or, with a {@code version}, at
     * {@code /v2/models/<model>/versions/<version>/infer}; with an {@code id} (null: none).
     *
     * @return the answer, which must be a 200
     */
    JsonNode oipInfer(String model, String version, String id, int i) throws Exception {
        String body = (id == null ? "{" : "{\"id\":\"" + id + "\",")
                + "\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1," + CLASSES
                + "],\"data\":" + json.writeValueAsString(oneHot(i)) + "}]}";
        HttpResponse<String> r = post(query + "/v2/models/" + model + (version == null ? "" : "/versions/" + version)
                + "/infer", body);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return json.readTree(r.body());
    }

    /**
     * Queries with feedback from 8 threads, each query from a new uid and of the next of the
     * first {@code classes} classes, until {@code done} holds or {@code max} queries were sent.
     *
     * @return the queries sent by this call
     */
    long queryWithFeedbackUntil(String app, int classes, BooleanSupplier done, long max) throws Exception {
        long before = sent.get();
        AtomicBoolean stop = new AtomicBoolean();
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            workers.add(threads.submit(() -> {
                while (!stop.get()) {
                    long n = sent.incrementAndGet();
                    if (n - before > max) {
                        sent.decrementAndGet();
                        return null;
                    }
                    String uid = app + "-u" + n;
                    int i = (int) (n % classes);
                    answer(app, uid, i);
                    feedback(app, uid, i);
                }
                return null;
            }));
        }
        try {
            while (workers.stream().anyMatch(w -> !w.isDone())) {
                if (done.getAsBoolean()) {
                    stop.set(true);
                }
                Thread.sleep(50);
            }
        } finally {
            stop.set(true);
        }
        for (Future<?> w : workers) {
            w.get();
        }
        return sent.get() - before;
    }

    /** POSTs {@code /admin/<endpoint>} and returns the answer, whatever its status. */
    HttpResponse<String> adminRaw(String endpoint, String body) throws Exception {
        return post(admin + endpoint, body);
    }

    /** POSTs {@code /admin/<endpoint>}, which must answer 200, and returns its JSON. */
    JsonNode admin(String endpoint, Object body) throws Exception {
        HttpResponse<String> r = post(admin + endpoint, json.writeValueAsString(body));
        assertThat(r.statusCode()).as(endpoint + ": " + r.body()).isEqualTo(200);
        return json.readTree(r.body());
    }

    JsonNode rollout(String model) {
        try {
            return admin("get_rollout", Map.of("model_name", model));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Waits up to {@code timeout} for the model's rollout to reach {@code status}. */
    JsonNode awaitStatus(String model, String status, Duration timeout) throws Exception {
        long until = System.nanoTime() + timeout.toNanos();
        JsonNode r = rollout(model);
        while (!r.get("status").asString().equals(status)) {
            assertThat(System.nanoTime()).as("rollout of %s reached %s: %s", model, status, r).isLessThan(until);
            Thread.sleep(50);
            r = rollout(model);
        }
        return r;
    }

    /** Version 1 with 10 classes (current), version 2 with {@code candidateClasses}, an app {@code <model>-app} on the model. */
    void deploy(String model, int candidateClasses) throws Exception {
        deploy(model, new EmulatedPredictor<>(0.2, 0, candidateClasses), SLO_MICROS);
    }

    /** Version 1 with 10 classes (current), version 2 {@code candidate}, an app {@code <model>-app} with the SLO. */
    void deploy(String model, Predictor<float[], String> candidate, long sloMicros) throws Exception {
        for (int v = 1; v <= 2; v++) {
            Predictor<float[], String> p = v == 1 ? new EmulatedPredictor<>(0.2, 0, CLASSES) : candidate;
            ModelContainer<float[], String> c = ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS,
                    p).name(model).version(String.valueOf(v)).host("127.0.0.1").port(0).build().start();
            containers.add(c);
            admin("add_model", Map.of("model_name", model, "model_version", String.valueOf(v),
                    "input_type", "floats"));
            admin("add_container", Map.of("model_name", model, "model_version", String.valueOf(v),
                    "address", "127.0.0.1:" + c.port()));
        }
        admin("set_model_version", Map.of("model_name", model, "model_version", "1"));
        admin("add_app", Map.of("name", model + "-app", "input_type", "floats", "default_output", "-1",
                "latency_slo_micros", sloMicros));
        admin("add_model_links", Map.of("app_name", model + "-app", "model_names", List.of(model)));
        for (int v = 1; v <= 2; v++) {
            awaitReady(model, String.valueOf(v));
        }
    }

    void awaitReady(String model, String version) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!readyAll(model, version)) {
            assertThat(System.nanoTime()).as(model + ":" + version + " became ready").isLessThan(until);
            Thread.sleep(50);
        }
    }

    private boolean readyAll(String model, String version) throws Exception {
        for (JsonNode c : admin("get_all_containers", Map.of())) {
            if (c.path("model_name").asString().equals(model) && c.path("model_version").asString().equals(version)
                    && c.path("available").booleanValue()) {
                return true;
            }
        }
        return false;
    }

    private HttpResponse<String> post(String url, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Override
    public void close() {
        threads.shutdownNow();
        containers.forEach(ModelContainer::close);
    }
}
