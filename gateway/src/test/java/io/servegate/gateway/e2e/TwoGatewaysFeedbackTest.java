package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.servegate.containers.onnx.FashionMnist;
import io.servegate.containers.onnx.OnnxPredictor;
import io.servegate.gateway.GatewayApplication;
import io.servegate.gateway.api.AdminServer;
import io.servegate.core.selection.Exp4Policy;
import io.servegate.gateway.selection.RedisSelectionStateStore;
import io.servegate.gateway.selection.StateBounds;
import io.servegate.core.selection.Task;
import io.servegate.core.selection.Versioned;
import io.servegate.core.selection.WeightedState;
import io.servegate.gateway.testsupport.RedisServer;
import io.servegate.oip.client.ContainerClient;
import io.servegate.sdk.ModelContainer;
import io.servegate.oip.client.TensorType;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * No lost feedback, within one gateway and across two (Clipper §5.3: the selection state lives
 * in Redis, shared by every gateway): 8 concurrent writers, 4 through each of two gateway
 * instances sharing one real {@code redis-server} for both the registry and the selection
 * states, each send 1,000 {@code POST /ens/update} on the same app-wide state of an Exp4 app over
 * three real ONNX Fashion-MNIST classifiers (in-process containers on loopback gRPC). The final
 * state must be exactly what applying the same 8,000 observations one after another gives.
 *
 * <h2>Why the expected state does not depend on the order</h2>
 * Exp4's update is additive in log space ({@code log s_i -= η·L_i}), and the renormalization
 * after each step (largest log-weight 0) is a common shift, so without the weight floor the final
 * state is the same for every order of the observations, up to floating-point rounding (about
 * 1e-13 here). The floor ({@link WeightedState#MIN_RELATIVE_WEIGHT}) would make it
 * order-dependent once a model hits it; with the default η = 0.1 the tiny model would hit it
 * within a few hundred feedbacks, so this app uses η = {@value #ETA}, which keeps every weight
 * far above the floor over the 8,000 observations (asserted).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TwoGatewaysFeedbackTest {

    private static final Path MODELS = Path.of("../containers/onnx/models");
    private static final List<String> ONNX_MODELS = List.of("fmnist-cnn", "fmnist-logreg", "fmnist-tiny");
    private static final String APP = "ens";
    private static final String STATE = APP + "/" + Exp4Policy.NAME;
    private static final String PREFIX = "sg-two-gw";
    private static final double ETA = 0.001;
    /**
     * The two gateways form a fleet: each model is scheduled by one of them, so a 250-image batch
     * sends about 375 single-query forwards across; on a loaded 2-core machine (load 14) that took
     * longer than 2 s, which this test is not about.
     */
    private static final long SLO = 10_000_000;
    /** Distinct images that get feedback. */
    private static final int IMAGES = 2_000;
    private static final int WRITERS = 8;
    private static final int PER_WRITER = 1_000;
    private static final int TOTAL = WRITERS * PER_WRITER;
    private static final double TOLERANCE = 1e-9;

    private RedisServer redis;
    private final List<OnnxPredictor> predictors = new ArrayList<>();
    private final List<ModelContainer<float[], String>> containers = new ArrayList<>();
    private final List<ConfigurableApplicationContext> gateways = new ArrayList<>();
    private final List<WebClient> query = new ArrayList<>();
    private final List<WebClient> admin = new ArrayList<>();
    private ConnectionProvider connections;
    private ObjectMapper json;
    private FashionMnist data;
    /** model → its container's own answer for images 0..IMAGES-1. */
    private final Map<String, List<String>> answers = new HashMap<>();
    /** The JSON of {@code {"input": image i, "label": its true label}}. */
    private String[] feedbackBodies;
    private List<String> linked;

    @BeforeAll
    void start() throws Exception {
        long startNanos = System.nanoTime();
        redis = RedisServer.start();
        data = FashionMnist.testSet();
        List<float[]> images = data.images().subList(0, IMAGES);
        for (String m : ONNX_MODELS) {
            OnnxPredictor p = new OnnxPredictor(MODELS.resolve(m + ".onnx"));
            predictors.add(p);
            ModelContainer<float[], String> c = ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS, p)
                    .name(m).version("1").host("127.0.0.1").port(0).inputLength(FashionMnist.PIXELS).build().start();
            containers.add(c);
            try (ContainerClient direct = ContainerClient.connect("127.0.0.1:" + c.port(), 64 << 20)) {
                List<String> out = new ArrayList<>();
                for (int from = 0; from < IMAGES; from += 250) {
                    out.addAll(direct.infer(m, "1", TensorType.FLOATS, images.subList(from, from + 250),
                            TensorType.STRINGS, Duration.ofSeconds(30)).get().outputs());
                }
                answers.put(m, out);
            }
        }

        for (int g = 0; g < 2; g++) {
            gateways.add(new SpringApplicationBuilder(GatewayApplication.class).run(
                    "--server.port=0",
                    "--servegate.admin.port=0",
                    "--servegate.registry.store=redis",
                    "--servegate.registry.redis-uri=" + redis.uri(),
                    "--servegate.registry.key-prefix=" + PREFIX,
                    "--servegate.fleet.secret=two-gateways",
                    "--servegate.selection.store=redis",
                    "--servegate.selection.redis-uri=" + redis.uri(),
                    "--servegate.selection.key-prefix=" + PREFIX,
                    "--spring.main.banner-mode=off",
                    "--logging.level.root=WARN"));
        }
        json = gateways.get(0).getBean(ObjectMapper.class);
        connections = ConnectionProvider.builder("two-gateways-test").maxConnections(64)
                .pendingAcquireMaxCount(-1).build();
        WebClient.Builder http = WebClient.builder()
                .clientConnector(new ReactorClientHttpConnector(HttpClient.create(connections)
                        .responseTimeout(Duration.ofSeconds(30))))
                .codecs(c -> c.defaultCodecs().maxInMemorySize(16 << 20));
        for (ConfigurableApplicationContext gw : gateways) {
            int queryPort = ((WebServerApplicationContext) gw).getWebServer().getPort();
            int adminPort = gw.getBean(AdminServer.class).port();
            query.add(http.clone().baseUrl("http://127.0.0.1:" + queryPort).build());
            admin.add(http.clone().baseUrl("http://127.0.0.1:" + adminPort).build());
        }

        // everything through gateway A's admin API only
        WebClient a = admin.get(0);
        for (int i = 0; i < ONNX_MODELS.size(); i++) {
            String m = ONNX_MODELS.get(i);
            ok(a, "/admin/add_model", Map.of("model_name", m, "model_version", "1", "input_type", "floats"));
            ok(a, "/admin/add_container", Map.of("model_name", m, "model_version", "1",
                    "address", "127.0.0.1:" + containers.get(i).port()));
        }
        Map<String, Object> app = new LinkedHashMap<>();
        app.put("name", APP);
        app.put("input_type", "floats");
        app.put("default_output", "-1");
        app.put("latency_slo_micros", SLO);
        app.put("selection_policy", "exp4");
        app.put("selection_params", Map.of("eta", ETA));
        ok(a, "/admin/add_app", app);
        ok(a, "/admin/add_model_links", Map.of("app_name", APP, "model_names", ONNX_MODELS));

        // gateway B learns all of it from the shared registry; both connect to the containers
        for (int g = 0; g < 2; g++) {
            int gw = g;
            await("gateway " + gw + " sees app " + APP + " with its three links", () -> {
                Reply r = call(admin.get(gw), "/admin/get_linked_models", Map.of("app_name", APP));
                return r.status() == 200 && json.readTree(r.body()).size() == ONNX_MODELS.size();
            });
            await("gateway " + gw + " has an available replica of every model", () -> {
                Reply r = call(admin.get(gw), "/admin/get_all_containers", Map.of());
                if (r.status() != 200) {
                    return false;
                }
                long available = 0;
                for (JsonNode c : json.readTree(r.body())) {
                    available += c.get("available").booleanValue() ? 1 : 0;
                }
                return available == ONNX_MODELS.size();
            });
        }
        linked = new ArrayList<>();
        json.readTree(call(admin.get(1), "/admin/get_linked_models", Map.of("app_name", APP)).body())
                .forEach(n -> linked.add(n.asString()));
        assertThat(linked).containsExactlyInAnyOrderElementsOf(ONNX_MODELS);

        feedbackBodies = new String[IMAGES];
        for (int i = 0; i < IMAGES; i++) {
            feedbackBodies[i] = json.writeValueAsString(Map.of("input", images.get(i), "label", data.label(i)));
        }
        System.out.printf("TwoGatewaysFeedbackTest: set up in %.1f s%n", (System.nanoTime() - startNanos) / 1e9);
    }

    @AfterAll
    void stop() throws Exception {
        // the gateways first: they hold connections to Redis and to the containers
        for (ConfigurableApplicationContext gw : gateways) {
            gw.close();
        }
        if (connections != null) {
            connections.disposeLater().block(Duration.ofSeconds(10));
        }
        for (ModelContainer<float[], String> c : containers) {
            c.close();
        }
        for (OnnxPredictor p : predictors) {
            p.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void eightWritersOnTwoGatewaysLoseNoFeedback() throws Exception {
        Exp4Policy exp4 = new Exp4Policy(ETA, Task.CLASSIFICATION, Exp4Policy.DEFAULT_TOLERANCE,
                Exp4Policy.DEFAULT_SCALE);

        long warmNanos = System.nanoTime();
        // Predict every feedback image on both gateways first, so feedback joins the remembered
        // predictions (the result must not depend on it). With the equal initial weights the
        // answers are the equal-weight vote of the containers' own outputs, on both gateways.
        for (int g = 0; g < 2; g++) {
            for (int from = 0; from < IMAGES; from += 250) {
                Reply r = call(query.get(g), "/" + APP + "/predict",
                        Map.of("input_batch", data.images().subList(from, from + 250)));
                assertThat(r.status()).as("gateway %d predict → %s", g, r.body()).isEqualTo(200);
                JsonNode out = json.readTree(r.body()).get("batch_predictions");
                assertThat(out).hasSize(250);
                for (int k = 0; k < 250; k++) {
                    int i = from + k;
                    assertThat(out.get(k).get("models_answered").intValue()).as("gateway %d image %d", g, i)
                            .isEqualTo(3);
                    assertThat(out.get(k).get("output").asString()).as("gateway %d image %d", g, i)
                            .isEqualTo(equalWeightVote(i));
                }
            }
        }
        assertThat(readState()).as("predictions write no state").isNull();
        System.out.printf("TwoGatewaysFeedbackTest: warmed both caches in %.1f s%n", (System.nanoTime() - warmNanos) / 1e9);
        long[] cacheBefore = {cacheRequests(0, "hit"), cacheRequests(1, "hit"),
            cacheRequests(0, "miss"), cacheRequests(1, "miss")};
        Map<String, Long> redisBefore = commandCalls();

        // 8 writers, 4 per gateway, each a sequential loop of 1,000 updates; all 8 in parallel.
        // Writer w sends images (w·250 + k) mod 2000: every image gets 4 feedbacks, from writers
        // on both gateways.
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        AtomicInteger unacknowledged = new AtomicInteger();
        AtomicLongArray seen = new AtomicLongArray(TOTAL + 1); // observations count → times answered
        List<Flux<Integer>> writers = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            int writer = w;
            WebClient gateway = query.get(w < WRITERS / 2 ? 0 : 1);
            writers.add(Flux.range(0, PER_WRITER).concatMap(k -> {
                int image = image(writer, k);
                // a 503 acknowledges nothing, so a client sends it again; were it sent after the
                // state was written, the observation counts below would show it twice
                return post(gateway, "/" + APP + "/update", feedbackBodies[image])
                        .flatMap(r -> r.status() == 503 ? Mono.error(new Unacknowledged(r)) : Mono.just(r))
                        .retryWhen(Retry.max(3).filter(Unacknowledged.class::isInstance)
                                .doBeforeRetry(x -> unacknowledged.incrementAndGet()))
                        .onErrorResume(Unacknowledged.class, e -> Mono.just(e.reply))
                        .map(r -> {
                    JsonNode node = r.status() == 200 ? json.readTree(r.body()) : null;
                    if (node == null || !node.path("observed").booleanValue()) {
                        failures.add("writer " + writer + " #" + k + " (image " + image + "): " + r.status() + " "
                                + r.body());
                    } else {
                        long n = node.path("observations").longValue();
                        if (n >= 1 && n <= TOTAL) {
                            seen.incrementAndGet((int) n);
                        } else {
                            failures.add("writer " + writer + " #" + k + ": observations " + n);
                        }
                    }
                    return k;
                });
            }));
        }
        long start = System.nanoTime();
        Flux.merge(writers).then().block(Duration.ofSeconds(120));
        double seconds = (System.nanoTime() - start) / 1e9;

        Map<String, Long> redisAfter = commandCalls();
        long scripts = delta(redisBefore, redisAfter, "evalsha") + delta(redisBefore, redisAfter, "eval");
        // each update is at most one script (SelectionStateStore.observe; updates of the state that arrive
        // while its script runs go together in the next one); an optimistic retry would add a CAS script
        System.out.printf("TwoGatewaysFeedbackTest: %d updates in %.2f s (%.0f/s); scripts run %d; %d answers 503 "
                        + "sent again; cache hits A %d, B %d, misses A %d, B %d%n",
                TOTAL, seconds, TOTAL / seconds, scripts, unacknowledged.get(),
                cacheRequests(0, "hit") - cacheBefore[0], cacheRequests(1, "hit") - cacheBefore[1],
                cacheRequests(0, "miss") - cacheBefore[2], cacheRequests(1, "miss") - cacheBefore[3]);

        assertThat(failures).as("updates that did not answer 200 with observed: true").isEmpty();
        // every write answered the count it wrote: no two updates wrote the same version
        List<Integer> notOnce = new ArrayList<>();
        for (int n = 1; n <= TOTAL; n++) {
            if (seen.get(n) != 1) {
                notOnce.add(n);
            }
        }
        assertThat(notOnce).as("observation counts not answered exactly once").isEmpty();
        assertThat(scripts).as("scripts run in Redis").isBetween(1L, (long) TOTAL);

        // the stored state, read from Redis directly
        Versioned stored = readState();
        assertThat(stored).isNotNull();
        WeightedState actual = exp4.codec().decode(stored.state());
        assertThat(actual.observations()).isEqualTo(TOTAL);
        assertThat(actual.models()).containsExactlyElementsOf(linked);

        // the sequential result: the same 8,000 observations, applied one after another
        List<Integer> observed = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            for (int k = 0; k < PER_WRITER; k++) {
                observed.add(image(w, k));
            }
        }
        WeightedState expected = sequential(exp4, observed);
        assertThat(expected.observations()).isEqualTo(TOTAL);
        // the floor is never reached, so the order of the observations does not matter
        for (double lw : expected.logWeights()) {
            assertThat(lw).isGreaterThan(Math.log(WeightedState.MIN_RELATIVE_WEIGHT) / 2);
        }
        List<Integer> reversed = new ArrayList<>(observed);
        java.util.Collections.reverse(reversed);
        assertClose(sequential(exp4, reversed), expected, "the reversed order");

        System.out.printf("TwoGatewaysFeedbackTest: stored %s%n                         expected %s%n", actual,
                expected);
        assertClose(actual, expected, "the stored state");

        // not vacuous: one lost update on an image where the models' losses differ would show
        int informative = -1;
        for (int i : observed) {
            if (distinctLosses(i)) {
                informative = i;
                break;
            }
        }
        assertThat(informative).as("an observation that moves the weights").isNotNegative();
        List<Integer> oneLost = new ArrayList<>(observed);
        oneLost.remove(Integer.valueOf(informative));
        WeightedState lost = sequential(exp4, oneLost);
        double largest = 0;
        for (int m = 0; m < linked.size(); m++) {
            largest = Math.max(largest, relativeDifference(lost.weights()[m], expected.weights()[m]));
        }
        assertThat(largest).as("weights after 7,999 vs 8,000 observations").isGreaterThan(1000 * TOLERANCE);
    }

    // ------------------------------------------------------------------------------------------

    record Reply(int status, String body) {
    }

    private static int image(int writer, int k) {
        return (writer * 250 + k) % IMAGES;
    }

    private WeightedState sequential(Exp4Policy exp4, List<Integer> observed) {
        WeightedState s = exp4.init(linked);
        for (int i : observed) {
            Map<String, String> outputs = new HashMap<>();
            for (String m : linked) {
                outputs.put(m, answers.get(m).get(i));
            }
            s = exp4.observe(s, data.images().get(i), Integer.toString(data.label(i)), outputs);
        }
        return s;
    }

    private void assertClose(WeightedState actual, WeightedState expected, String what) {
        double[] a = actual.weights();
        double[] e = expected.weights();
        for (int m = 0; m < a.length; m++) {
            assertThat(relativeDifference(a[m], e[m]))
                    .as("%s: weight of %s: %s vs expected %s", what, linked.get(m), actual, expected)
                    .isLessThanOrEqualTo(TOLERANCE);
        }
    }

    private static double relativeDifference(double a, double e) {
        return Math.abs(a - e) / Math.abs(e);
    }

    private boolean distinctLosses(int image) {
        String label = Integer.toString(data.label(image));
        return linked.stream().map(m -> answers.get(m).get(image).equals(label)).distinct().count() > 1;
    }

    /** The equal-weight vote: most votes, ties to the first in link order. */
    private String equalWeightVote(int image) {
        Map<String, Integer> votes = new LinkedHashMap<>();
        for (String m : linked) {
            votes.merge(answers.get(m).get(image), 1, Integer::sum);
        }
        String best = null;
        for (Map.Entry<String, Integer> e : votes.entrySet()) {
            if (best == null || e.getValue() > votes.get(best)) {
                best = e.getKey();
            }
        }
        return best;
    }

    private Versioned readState() {
        RedisClient client = RedisClient.create(redis.uri());
        try (RedisSelectionStateStore store = new RedisSelectionStateStore(client, PREFIX, StateBounds.DEFAULT)) {
            return store.get(STATE, null).block(Duration.ofSeconds(5));
        } finally {
            client.shutdown();
        }
    }

    /** Redis's own count of calls per command ({@code INFO commandstats}). */
    private Map<String, Long> commandCalls() {
        RedisClient client = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            Map<String, Long> calls = new HashMap<>();
            for (String line : c.sync().info("commandstats").split("\r?\n")) {
                // cmdstat_evalsha:calls=8123,usec=...
                if (line.startsWith("cmdstat_")) {
                    String name = line.substring("cmdstat_".length(), line.indexOf(':'));
                    String rest = line.substring(line.indexOf("calls=") + "calls=".length());
                    calls.put(name, Long.parseLong(rest.substring(0, rest.indexOf(','))));
                }
            }
            return calls;
        } finally {
            client.shutdown();
        }
    }

    private static long delta(Map<String, Long> before, Map<String, Long> after, String command) {
        return after.getOrDefault(command, 0L) - before.getOrDefault(command, 0L);
    }

    private long cacheRequests(int gateway, String result) {
        String text = query.get(gateway).get().uri("/metrics").accept(MediaType.TEXT_PLAIN).retrieve()
                .bodyToMono(String.class)
                .block(Duration.ofSeconds(10));
        double sum = 0;
        for (String line : text.split("\n")) {
            if (line.startsWith("servegate_cache_requests_total") && line.contains("result=\"" + result + "\"")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return (long) sum;
    }

    /** A 503: the update was not acknowledged. */
    private static final class Unacknowledged extends RuntimeException {
        final Reply reply;

        Unacknowledged(Reply reply) {
            super(reply.body(), null, false, false);
            this.reply = reply;
        }
    }

    private Mono<Reply> post(WebClient client, String uri, String body) {
        return client.post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchangeToMono(r -> r.bodyToMono(String.class).defaultIfEmpty("")
                        .map(b -> new Reply(r.statusCode().value(), b)));
    }

    private Reply call(WebClient client, String uri, Object body) {
        return post(client, uri, json.writeValueAsString(body)).block(Duration.ofSeconds(30));
    }

    private void ok(WebClient client, String uri, Object body) {
        Reply r = call(client, uri, body);
        assertThat(r.status()).as("%s → %s", uri, r.body()).isEqualTo(200);
    }

    private static void await(String what, java.util.concurrent.Callable<Boolean> condition) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!condition.call()) {
            assertThat(System.nanoTime()).as(what).isLessThan(until);
            Thread.sleep(50);
        }
    }
}
