package io.servegate.gateway.api.fuzz;

import static io.servegate.gateway.api.fuzz.JsonFuzz.utf8;
import static io.servegate.gateway.api.fuzz.JsonFuzz.write;
import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.api.fuzz.JsonFuzz.Obj;
import io.servegate.gateway.testsupport.ContainerProcess;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
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
 * Generated bad (and odd but valid) input against a real gateway over loopback HTTP: both REST
 * APIs, with a floats and a bytes model served by emulated containers in their own processes so
 * that valid-looking inputs reach parsing, batching, selection and the container RPC. Every answer
 * must be 200 or a 4xx with a JSON {@code {"error", "cause"}} body ({@code {"error"}} under /v2): never a 5xx, never a stack
 * trace, never a hang (each request has a timeout), and the gateway must be healthy afterwards.
 * Seeds are fixed ({@code -Dfuzz.seed=N} to vary); a failure names the case to reproduce.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0",
    "servegate.limits.max-body-size=256KB",
    "servegate.limits.max-batch-inputs=32",
    "servegate.limits.max-input-length=4096",
    "servegate.oip.timeout=2s",
    "servegate.selection.feedback-timeout=50ms"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class InputFuzzTest {

    private static final long SEED = Long.getLong("fuzz.seed", 7L);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(15);
    private static final int CONCURRENCY = 8;
    private static final int LIMIT_BYTES = 256 * 1024;

    /** Apps of every input type: with a served model, with none (defaults), with a learning policy. */
    private static final List<String> APPS = List.of("fz-f", "fz-b", "fz-s", "fz-i", "fz-d", "fz-x");

    /**
     * Apps whose floats model is served. Their vectors keep one length: the emulated container
     * declares no input length, and the gateway batches vectors of different lengths together,
     * which fails the whole batch (an open issue in ReplicaWorker); other apps get any length.
     */
    private static final List<String> SERVED = List.of("fz-f", "fz-x");
    private static final int WIDTH = 4;

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final AtomicInteger cases = new AtomicInteger();
    private final AtomicInteger testsRun = new AtomicInteger();
    private final Map<Integer, Integer> statuses = new TreeMap<>();
    private ContainerProcess floats;
    private ContainerProcess bytes;

    record Case(String name, int port, String method, String path, String contentType, byte[] body) {
    }

    @BeforeAll
    void deploy() throws Exception {
        floats = ContainerProcess.start("io.servegate.containers.emulated.EmulatedContainer",
                "--name", "emu-f", "--version", "1", "--beta-ms", "0", "--alpha-ms", "0");
        bytes = ContainerProcess.start("io.servegate.containers.emulated.EmulatedContainer",
                "--name", "emu-b", "--version", "1", "--beta-ms", "0", "--alpha-ms", "0", "--input-type", "bytes");
        admin("add_model", "{\"model_name\":\"emu-f\",\"model_version\":\"1\",\"input_type\":\"floats\"}");
        admin("add_model", "{\"model_name\":\"emu-g\",\"model_version\":\"1\",\"input_type\":\"floats\"}");
        admin("add_model", "{\"model_name\":\"emu-b\",\"model_version\":\"1\",\"input_type\":\"bytes\"}");
        admin("add_container", "{\"model_name\":\"emu-f\",\"model_version\":\"1\",\"address\":\"" + floats.address() + "\"}");
        admin("add_container", "{\"model_name\":\"emu-b\",\"model_version\":\"1\",\"address\":\"" + bytes.address() + "\"}");
        app("fz-f", "floats", "\"candidate_model_names\":[\"emu-f\"]");
        app("fz-b", "bytes", "\"candidate_model_names\":[\"emu-b\"]");
        app("fz-s", "strings", "\"candidate_model_names\":[]");
        app("fz-i", "ints", "\"candidate_model_names\":[]");
        app("fz-d", "doubles", "\"candidate_model_names\":[]");
        app("fz-x", "floats", "\"candidate_model_names\":[\"emu-f\",\"emu-g\"],\"selection_policy\":\"exp3\"");
        // the served models answer (not only defaults) before fuzzing starts
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            HttpResponse<String> r = send(new Case("warmup", queryPort, "POST", "/fz-b/predict", "application/json",
                    utf8("{\"input\":\"QUJD\"}")));
            HttpResponse<String> f = send(new Case("warmup", queryPort, "POST", "/fz-f/predict", "application/json",
                    utf8("{\"input\":[1,2,3,4]}")));
            if (r.body().contains("\"default\":false") && f.body().contains("\"default\":false")) {
                break;
            }
            assertThat(System.nanoTime()).as("containers answer").isLessThan(until);
            Thread.sleep(100);
        }
    }

    @AfterAll
    void stopAndReport() throws Exception {
        try {
            assertHealthy();
            System.out.printf("InputFuzzTest: %d generated cases (seed %d), statuses %s%n", cases.get(), SEED,
                    statuses);
            if (testsRun.get() == 6) { // the whole class ran, not one method of it
                assertThat(cases.get()).as("generated cases in the suite").isGreaterThanOrEqualTo(10_000);
            }
        } finally {
            floats.close();
            bytes.close();
        }
    }

    // ------------------------------------------------------------------------------------ query API

    @Test
    void predict() throws Exception {
        JsonFuzz g = new JsonFuzz(SEED);
        run(3500, i -> {
            String app = g.chance(0.9) ? g.pick(APPS) : oddName(g);
            Obj valid = validPredict(g, app);
            g.keepLengths(SERVED.contains(app));
            return bodyCase("predict#" + i, g, queryPort, "/" + encode(app) + "/predict", valid);
        });
    }

    @Test
    void update() throws Exception {
        JsonFuzz g = new JsonFuzz(SEED + 1);
        run(1500, i -> {
            String app = g.chance(0.9) ? g.pick(List.of("fz-x", "fz-f", "fz-s")) : oddName(g);
            Obj valid = new Obj().with("input", validInput(g, app)).with("label", g.chance(0.5) ? 1 : "3");
            g.keepLengths(SERVED.contains(app));
            if (g.chance(0.3)) {
                valid.with("uid", g.nextInt(5));
            }
            return bodyCase("update#" + i, g, queryPort, "/" + encode(app) + "/update", valid);
        });
    }

    @Test
    void openInferenceProtocol() throws Exception {
        JsonFuzz g = new JsonFuzz(SEED + 2);
        run(2000, i -> {
            boolean bytesModel = g.chance(0.3);
            String model = g.chance(0.85) ? (bytesModel ? "emu-b" : "emu-f") : oddName(g);
            if (g.chance(0.15)) {
                String path = g.pick("/v2/models/" + encode(model), "/v2/models/" + encode(model) + "/ready",
                        "/v2/health/live", "/v2/health/ready", "/v2/models/" + encode(model) + "/versions/"
                                + encode(oddName(g)) + "/infer");
                return new Case("oip#" + i, queryPort, g.chance(0.8) ? "GET" : g.pick("PUT", "DELETE", "PATCH"), path,
                        null, new byte[0]);
            }
            int rows = 1 + g.nextInt(3);
            int width = WIDTH;
            g.keepLengths(true);
            Obj tensor = new Obj().with("name", "input").with("datatype", bytesModel ? "BYTES" : "FP32");
            if (bytesModel) {
                List<Object> data = new ArrayList<>();
                for (int r = 0; r < rows; r++) {
                    data.add("row" + r);
                }
                tensor.with("shape", List.of(rows)).with("data", data);
            } else {
                tensor.with("shape", List.of(rows, width)).with("data", g.vector(rows * width, false));
            }
            Obj valid = new Obj().with("id", "r" + i).with("inputs", List.of(g.chance(0.7) ? tensor : g.mutate(tensor)));
            String path = g.chance(0.8) ? "/v2/models/" + encode(model) + "/infer"
                    : "/v2/models/" + encode(model) + "/versions/" + (g.chance(0.7) ? "1" : encode(oddName(g))) + "/infer";
            return bodyCase("oip#" + i, g, queryPort, path, valid);
        });
    }

    // ------------------------------------------------------------------------------------ admin API

    @Test
    void admin() throws Exception {
        JsonFuzz g = new JsonFuzz(SEED + 3);
        List<String> endpoints = List.of("add_app", "delete_app", "add_model", "set_model_version",
                "delete_versioned_model", "add_model_links", "delete_model_links", "add_container",
                "delete_container", "get_all_applications", "get_application", "get_linked_models", "get_all_models",
                "get_model", "get_all_containers");
        run(2500, i -> {
            if (g.chance(0.04)) {
                return new Case("admin#" + i, adminServer.port(), g.pick("GET", "POST", "PUT", "DELETE"),
                        g.pick("/admin/ping", "/admin/" + encode(g.string()), "/admin", "/", "/admin/add_app/x"),
                        "application/json", utf8("{}"));
            }
            String endpoint = g.pick(endpoints);
            return bodyCase("admin#" + i, g, adminServer.port(), "/admin/" + endpoint, validAdmin(g, endpoint));
        });
    }

    // ------------------------------------------------------------------------------------ raw HTTP

    /** Request lines and headers no HTTP client library would send: raw bytes over a socket. */
    @Test
    void rawPathsAndHeaders() throws Exception {
        JsonFuzz g = new JsonFuzz(SEED + 4);
        List<String> failures = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            boolean toAdmin = g.chance(0.3);
            String path = toAdmin ? g.pick("/admin/get_application", "/admin/" + rawJunk(g), "/admin/%zz",
                    "/admin/../admin/ping", "/admin/add_app%00") : g.pick("/" + rawJunk(g) + "/predict",
                    "/fz-f/predict/" + rawJunk(g), "/v2/models/" + rawJunk(g) + "/infer", "/%", "/%zz/predict",
                    "/fz-f%2Fpredict", "//fz-f/predict", "/fz-f/./predict", "/fz-f/../fz-f/predict", "/fz-f;x=1/predict",
                    "/" + rawJunk(g) + "/update", "/metrics/" + rawJunk(g));
            String contentType = g.pick("application/json", "text/plain", "application/json; charset=bogus",
                    "application/json; charset=utf-16", "multipart/form-data; boundary=x", ";;;", "", "*/*",
                    "application/x-www-form-urlencoded");
            byte[] body = utf8(g.pick("{\"name\":\"fz-f\"}", "{\"input\":[1,2]}", "", "{", "\u00ff\u00fe"));
            String request = "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + (contentType.isEmpty() ? "" : "Content-Type: " + contentType + "\r\n")
                    + (g.chance(0.1) ? "Transfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(body.length)
                            + "\r\n" + new String(body, StandardCharsets.ISO_8859_1) + "\r\n0\r\n\r\n"
                            : "Content-Length: " + body.length + "\r\nConnection: close\r\n\r\n"
                                    + new String(body, StandardCharsets.ISO_8859_1));
            cases.incrementAndGet();
            String problem = checkRaw(toAdmin ? adminServer.port() : queryPort, request.getBytes(StandardCharsets.ISO_8859_1));
            if (problem != null) {
                failures.add("raw#" + i + " " + escape(request) + ": " + problem);
            }
        }
        assertThat(failures).as("raw requests answered with a 5xx, no answer or no JSON error").isEmpty();
        assertHealthy();
        testsRun.incrementAndGet();
    }

    // ------------------------------------------------------------------------------------ limits and structure

    /** Fixed cases: limits, nesting, giant numbers, and regressions of bugs this fuzzer found. */
    @Test
    void edgeCases() throws Exception {
        List<Case> fixed = new ArrayList<>();
        int q = queryPort;
        int a = adminServer.port();
        String over = "{\"input\":\"" + "A".repeat(LIMIT_BYTES + 10) + "\"}";
        for (String path : List.of("/fz-b/predict", "/fz-f/update", "/v2/models/emu-f/infer")) {
            fixed.add(new Case("giant " + path, q, "POST", path, "application/json", utf8(over)));
        }
        for (String path : List.of("/admin/add_app", "/admin/get_all_models", "/admin/add_container")) {
            fixed.add(new Case("giant " + path, a, "POST", path, "application/json", utf8(over)));
        }
        fixed.add(new Case("deep arrays", q, "POST", "/fz-f/predict", "application/json",
                utf8(JsonFuzz.nested(10_000, true))));
        fixed.add(new Case("deep objects", q, "POST", "/fz-x/update", "application/json",
                utf8(JsonFuzz.nested(10_000, false))));
        fixed.add(new Case("deep admin", a, "POST", "/admin/add_app", "application/json",
                utf8(JsonFuzz.nested(10_000, false))));
        fixed.add(new Case("deep oip", q, "POST", "/v2/models/emu-f/infer", "application/json",
                utf8(JsonFuzz.nested(10_000, true))));
        fixed.add(new Case("batch over the limit", q, "POST", "/fz-f/predict", "application/json",
                utf8("{\"input_batch\":" + "[[1],".repeat(33) + "[1]]}")));
        fixed.add(new Case("input over the length limit", q, "POST", "/fz-d/predict", "application/json",
                utf8("{\"input\":[" + "1,".repeat(4096) + "1]}")));
        fixed.add(new Case("oip rows over the limit", q, "POST", "/v2/models/emu-f/infer", "application/json",
                utf8("{\"inputs\":[{\"name\":\"i\",\"datatype\":\"FP32\",\"shape\":[33,1],\"data\":[" + "1,".repeat(32)
                        + "1]}]}")));
        for (String n : List.of("1e400", "-1e400", "1e-400", "99999999999999999999999", "-9223372036854775809",
                "2" + "0".repeat(308), "-" + "9".repeat(309), "9".repeat(999), "1e99999999999", "0." + "3".repeat(900),
                "NaN", "Infinity", "01")) {
            fixed.add(new Case("number " + n, q, "POST", "/fz-f/predict", "application/json",
                    utf8("{\"input\":[1,2,3," + n + "]}")));
            fixed.add(new Case("slo " + n, a, "POST", "/admin/add_app", "application/json",
                    utf8("{\"name\":\"fuzz-n\",\"input_type\":\"floats\",\"default_output\":\"x\",\"latency_slo_micros\":"
                            + n + "}")));
            fixed.add(new Case("oip shape " + n, q, "POST", "/v2/models/emu-f/infer", "application/json",
                    utf8("{\"inputs\":[{\"name\":\"i\",\"datatype\":\"FP32\",\"shape\":[" + n + ",1],\"data\":[1]}]}")));
            fixed.add(new Case("uid " + n, q, "POST", "/fz-x/predict", "application/json",
                    utf8("{\"uid\":" + n + ",\"input\":[1,2,3,4]}")));
            fixed.add(new Case("batch size " + n, a, "POST", "/admin/add_model", "application/json",
                    utf8("{\"model_name\":\"fuzz-n\",\"model_version\":\"1\",\"input_type\":\"floats\",\"batch_size\":"
                            + n + "}")));
            fixed.add(new Case("threshold " + n, a, "POST", "/admin/add_app", "application/json",
                    utf8("{\"name\":\"fuzz-t\",\"input_type\":\"floats\",\"default_output\":\"x\",\"latency_slo_micros\":1,"
                            + "\"confidence_threshold\":" + n + "}")));
            fixed.add(new Case("label " + n, q, "POST", "/fz-x/update", "application/json",
                    utf8("{\"input\":[1,2,3,4],\"label\":" + n + "}")));
            fixed.add(new Case("update input " + n, q, "POST", "/fz-x/update", "application/json",
                    utf8("{\"input\":[1,2,3," + n + "],\"label\":1}")));
            fixed.add(new Case("batch input " + n, q, "POST", "/fz-d/predict", "application/json",
                    utf8("{\"input_batch\":[[1],[" + n + "]]}")));
            fixed.add(new Case("oip data " + n, q, "POST", "/v2/models/emu-f/infer", "application/json",
                    utf8("{\"inputs\":[{\"name\":\"i\",\"datatype\":\"FP32\",\"shape\":[1,4],\"data\":[1,2,3," + n
                            + "]}]}")));
        }
        for (String b64 : List.of("!!!", "QUJD=", "Q", "====", "QUJD\u00e9", "QU JD")) {
            fixed.add(new Case("base64 " + b64, q, "POST", "/fz-b/predict", "application/json",
                    utf8("{\"input\":\"" + b64 + "\"}")));
        }
        // regressions: a malformed Content-Type made handlers throw outside their Mono (admin: 500, empty body)
        for (String type : List.of("a/b/c", ";;;", "application/json; charset=bogus")) {
            fixed.add(new Case("regression content type " + type, a, "POST", "/admin/get_application", type,
                    utf8("{\"name\":\"fz-f\"}")));
            fixed.add(new Case("regression content type " + type, q, "POST", "/fz-f/predict", type,
                    utf8("{\"input\":[1,2,3,4]}")));
        }
        // regression: the OIP not-ready 400 had no {error, cause}
        fixed.add(new Case("regression not ready", q, "GET", "/v2/models/emu-g/ready", null, new byte[0]));
        fixed.add(new Case("empty", q, "POST", "/fz-f/predict", null, new byte[0]));
        fixed.add(new Case("empty admin", a, "POST", "/admin/add_app", null, new byte[0]));
        int failed = 0;
        List<String> failures = new ArrayList<>();
        for (Case c : fixed) {
            cases.incrementAndGet();
            String problem = check(c);
            if (problem != null) {
                failures.add(c.name() + ": " + problem);
                failed++;
            }
        }
        assertThat(failures).as("fixed edge cases").isEmpty();
        assertThat(failed).isZero();
        // the limits are enforced with the right status on every endpoint, not only "some 4xx"
        for (Case c : fixed) {
            int expected = c.name().startsWith("giant") ? 413
                    : c.name().startsWith("deep") || c.name().contains("over the") || c.name().startsWith("base64")
                            || c.name().startsWith("empty") ? 400 : 0;
            if (expected != 0) {
                HttpResponse<String> r = send(c);
                assertThat(r.statusCode()).as(c.name() + ": " + escape(r.body())).isEqualTo(expected);
            }
        }
        assertHealthy();
        testsRun.incrementAndGet();
    }

    // ------------------------------------------------------------------------------------ generation

    private Obj validPredict(JsonFuzz g, String app) {
        Obj body = new Obj();
        if (g.chance(0.75)) {
            body.with("input", validInput(g, app));
        } else {
            List<Object> batch = new ArrayList<>();
            for (int n = 1 + g.nextInt(4); n > 0; n--) {
                batch.add(validInput(g, app));
            }
            body.with("input_batch", batch);
        }
        if (g.chance(0.2)) {
            body.with(g.chance(0.5) ? "uid" : "context", g.chance(0.5) ? (Object) g.nextInt(10) : g.string());
        }
        if (g.chance(0.1)) {
            body.with("version", g.chance(0.5) ? "1" : g.string());
        }
        return body;
    }

    private static Object validInput(JsonFuzz g, String app) {
        return switch (app) {
            case "fz-b" -> Base64.getEncoder().encodeToString(utf8(g.string()));
            case "fz-s" -> g.string();
            case "fz-i" -> List.of(g.nextInt(100), -g.nextInt(100));
            case "fz-f", "fz-x" -> g.vector(WIDTH, g.chance(0.1));
            default -> g.vector(1 + g.nextInt(6), g.chance(0.1));
        };
    }

    private static Obj validAdmin(JsonFuzz g, String endpoint) {
        String app = "fuzz-a" + g.nextInt(4);
        String model = "fuzz-m" + g.nextInt(3);
        String version = Integer.toString(1 + g.nextInt(2));
        return switch (endpoint) {
            case "add_app" -> new Obj().with("name", app).with("input_type", g.pick("floats", "bytes", "strings"))
                    .with("default_output", "d").with("latency_slo_micros", 20_000)
                    .with("candidate_model_names", g.chance(0.5) ? List.of(model) : List.of())
                    .with("selection_policy", g.pick("single", "exp3", "exp4"))
                    .with("confidence_threshold", 0.5);
            case "delete_app", "get_application" -> new Obj().with("name", app);
            case "add_model" -> new Obj().with("model_name", model).with("model_version", version)
                    .with("input_type", "floats").with("labels", List.of("l")).with("container_name", "c")
                    .with("model_data_path", "/tmp/x").with("batch_size", g.pick(List.of(-1, 1, 8)));
            case "set_model_version", "delete_versioned_model", "get_model" ->
                    new Obj().with("model_name", model).with("model_version", version);
            case "add_model_links", "delete_model_links" ->
                    new Obj().with("app_name", app).with("model_names", List.of(model));
            case "add_container" -> new Obj().with("model_name", model).with("model_version", version)
                    .with("address", g.chance(0.3) ? "127.0.0.1:1" : g.pick("http://127.0.0.1:1", "127.0.0.1:1/x",
                            "u@127.0.0.1:1", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:+1", "127.0.0.1: 1",
                            "[::1]:1", "[::1:1", "[a/b]:1", "host..name:1", "-host:1", "h_st:1", ":1", "h:",
                            "127.0.0.1:\u0661", "\u00e9:1", "h\u0000:1", "a".repeat(300) + ":1", "h:99999999999",
                            "127.0.0.1:1?x", "127.0.0.1:1#f", "localhost:1"))
                    .with("container_id", "fuzz-c" + g.nextInt(3));
            case "delete_container" -> new Obj().with("container_id", "fuzz-c" + g.nextInt(3));
            case "get_linked_models" -> new Obj().with("app_name", app);
            default -> new Obj().with("verbose", g.chance(0.5));
        };
    }

    /** A case from a valid body: sent as is, tree-mutated, text-damaged, replaced or with an odd content type. */
    private static Case bodyCase(String name, JsonFuzz g, int port, String path, Obj valid) {
        Object tree = g.chance(0.25) ? valid : g.mutate(valid);
        if (g.chance(0.05)) {
            tree = g.value(3);
        }
        byte[] body = utf8(write(tree));
        if (g.chance(0.2)) {
            body = g.damage(body);
        }
        if (g.chance(0.01)) {
            body = new byte[0];
        }
        String contentType = g.chance(0.85) ? "application/json" : g.pick("text/plain", "application/xml",
                "application/json; charset=utf-16", "application/json; charset=bogus", "image/png", "a/b/c");
        String method = g.chance(0.97) ? "POST" : g.pick("PUT", "GET", "DELETE", "PATCH");
        return new Case(name, port, method, path, g.chance(0.03) ? null : contentType, body);
    }

    /** App and model names with separators, traversal, controls, unicode, length. */
    private static String oddName(JsonFuzz g) {
        return g.pick("a,b", "a:b", "a/b", "..", "../admin", "a\u0000b", "a\u001fb", "\u00e9t\u00e9", "\u65e5\u672c",
                "\uD83D\uDE00", "A", "x".repeat(300), "%41", "fz-f%00", " ", "fz-f.", "unknown-app", g.string());
    }

    private static String rawJunk(JsonFuzz g) {
        return g.pick("%", "%z", "%zz", "%00", "%2e%2e", "..", "%C3%28", "%ff%fe", "\u00c3\u00a9", "a%2Cb", "a:b", "a,b",
                "%252e", "~", "!$&'()*+", "@", "[", "]", "x".repeat(5000), "%E2%80%AE", "a%20b");
    }

    private static String encode(String segment) {
        StringBuilder sb = new StringBuilder();
        for (byte b : utf8(segment)) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
                    || c == '_' || c == '~' || c == ',' || c == ':') {
                sb.append((char) c);
            } else {
                sb.append('%').append(String.format("%02X", c));
            }
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------------------------ sending and checking

    private interface CaseSource {
        Case next(int i);
    }

    /** Sends {@code n} generated cases, {@value #CONCURRENCY} at a time, and fails listing every bad answer. */
    private void run(int n, CaseSource source) throws Exception {
        Semaphore inFlight = new Semaphore(CONCURRENCY);
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        List<CompletableFuture<?>> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Case c = source.next(i); // generated on this thread, in order: the seed alone fixes every case
            inFlight.acquire();
            cases.incrementAndGet();
            all.add(sendAsync(c).handle((r, e) -> {
                inFlight.release();
                String problem = e != null ? "no answer: " + e : problem(c.path(), r.statusCode(), r.body());
                if (problem != null) {
                    failures.add(c.name() + " " + c.method() + " " + escape(c.path()) + " ["
                            + escape(new String(c.body(), StandardCharsets.UTF_8)) + "]: " + problem);
                }
                return null;
            }));
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
        assertThat(failures).as("answers with a 5xx, no answer, a stack trace or no JSON error").isEmpty();
        assertHealthy();
        testsRun.incrementAndGet();
    }

    private String check(Case c) {
        try {
            HttpResponse<String> r = send(c);
            return problem(c.path(), r.statusCode(), r.body());
        } catch (Exception e) {
            return "no answer: " + e;
        }
    }

    private String problem(String path, int status, String body) {
        synchronized (statuses) {
            statuses.merge(status, 1, Integer::sum);
        }
        if (status >= 500 || status < 200 || (status >= 300 && status < 400)) {
            return "status " + status + " " + escape(body);
        }
        if (body.contains("\tat ") || body.contains(".java:") || body.contains("Exception:")) {
            return "stack trace in the body: " + escape(body);
        }
        if (status >= 400) {
            try {
                JsonNode n = json.readTree(body);
                // under /v2 the protocol's {error}; elsewhere {error, cause}
                boolean oip = path.startsWith("/v2");
                if (!n.isObject() || !n.path("error").isString() || n.path("cause").isString() == oip) {
                    return "status " + status + " without " + (oip ? "{error}" : "{error, cause}") + ": "
                            + escape(body);
                }
            } catch (RuntimeException e) {
                return "status " + status + " with a non-JSON body: " + escape(body);
            }
        }
        return null;
    }

    /** Raw HTTP: Netty's own rejections of a malformed request line may have no JSON body, but never a 5xx. */
    private String checkRaw(int port, byte[] request) {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout((int) REQUEST_TIMEOUT.toMillis());
            OutputStream out = s.getOutputStream();
            out.write(request);
            out.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            int n;
            while ((n = in.read(buf)) > 0) {
                got.write(buf, 0, n);
                String text = got.toString(StandardCharsets.UTF_8);
                if (text.contains("\r\n\r\n") && contentComplete(text)) {
                    break;
                }
            }
            String text = got.toString(StandardCharsets.UTF_8);
            if (!text.startsWith("HTTP/1.1 ")) {
                return "no HTTP answer: " + escape(text);
            }
            int status = Integer.parseInt(text.substring(9, 12));
            String body = text.substring(text.indexOf("\r\n\r\n") + 4);
            int length = contentLength(text);
            if (length >= 0 && body.length() > length) {
                body = body.substring(0, length); // a second answer after it is Netty's to unread body bytes
            }
            if ((status == 400 || status == 414 || status == 431) && length == 0) {
                return null; // Netty refused the request line or headers before any handler ran
            }
            // the request line's target decides the error body's shape, as the gateway's router sees it
            String[] line = new String(request, StandardCharsets.ISO_8859_1).split("\r\n", 2)[0].split(" ");
            return problem(line.length > 1 ? line[1] : "", status, body);
        } catch (IOException e) {
            return "no answer: " + e;
        }
    }

    private static boolean contentComplete(String text) {
        int length = contentLength(text);
        return length >= 0 && text.getBytes(StandardCharsets.UTF_8).length - text.indexOf("\r\n\r\n") - 4 >= length;
    }

    private static int contentLength(String text) {
        String headers = text.substring(0, text.indexOf("\r\n\r\n")).toLowerCase(java.util.Locale.ROOT);
        int at = headers.indexOf("content-length:");
        if (at < 0) {
            return -1;
        }
        int end = headers.indexOf("\r\n", at);
        return Integer.parseInt(headers.substring(at + 15, end < 0 ? headers.length() : end).trim());
    }

    private CompletableFuture<HttpResponse<String>> sendAsync(Case c) {
        return http.sendAsync(request(c), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private HttpResponse<String> send(Case c) throws IOException, InterruptedException {
        return http.send(request(c), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private static HttpRequest request(Case c) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + c.port() + c.path()))
                .timeout(REQUEST_TIMEOUT)
                .method(c.method(), c.body().length == 0 && !c.method().equals("POST")
                        ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(c.body()));
        if (c.contentType() != null) {
            b.header("Content-Type", c.contentType());
        }
        return b.build();
    }

    private void admin(String endpoint, String body) throws Exception {
        HttpResponse<String> r = send(new Case(endpoint, adminServer.port(), "POST", "/admin/" + endpoint,
                "application/json", utf8(body)));
        assertThat(r.statusCode()).as(endpoint + " " + r.body()).isEqualTo(200);
    }

    private void app(String name, String type, String models) throws Exception {
        admin("add_app", "{\"name\":\"" + name + "\",\"input_type\":\"" + type + "\",\"default_output\":\"-1\","
                + "\"latency_slo_micros\":100000," + models + "}");
    }

    private void assertHealthy() throws Exception {
        assertThat(send(new Case("live", queryPort, "GET", "/v2/health/ready", null, new byte[0])).statusCode())
                .isEqualTo(200);
        assertThat(send(new Case("ping", adminServer.port(), "GET", "/admin/ping", null, new byte[0])).statusCode())
                .isEqualTo(200);
        HttpResponse<String> r = send(new Case("predict", queryPort, "POST", "/fz-f/predict", "application/json",
                utf8("{\"input\":[0.5,0.25,1,2]}")));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }

    private static String escape(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < Math.min(s.length(), 300); i++) {
            char c = s.charAt(i);
            sb.append(c < 0x20 || c > 0x7e ? String.format("\\u%04x", (int) c) : String.valueOf(c));
        }
        return s.length() > 300 ? sb + "...(" + s.length() + " chars)" : sb.toString();
    }
}
