package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.containers.emulated.EmulatedPredictor;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.GatewayCalls;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;
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
 * Binary inputs end to end, over real HTTP and real gRPC to emulated containers in their own
 * processes: OIP REST requests built as the binary tensor data extension describes them (a JSON
 * header whose length is in {@code Inference-Header-Content-Length}, then the raw tensors), binary
 * outputs when asked, raw {@code application/octet-stream} bodies on {@code /{app}/predict}, and a
 * 4xx with a JSON body naming the problem for every inconsistency. The containers' labels are a
 * CRC-32 of each input's bytes, so a label that matches the one computed here proves the bytes
 * arrived unchanged.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "servegate.admin.port=0", "servegate.oip.grpc-port=0"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BinaryDataEndToEndTest {

    private static final int CLASSES = 1000;
    /** 3 x 8 x 8 uint8 "images". */
    private static final int IMAGE_BYTES = 3 * 8 * 8;
    private static final String HEADER = "Inference-Header-Content-Length";

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final EmulatedPredictor<byte[]> labels = new EmulatedPredictor<>(0, 0, CLASSES);
    private ContainerProcess images;
    private ContainerProcess vectors;

    @BeforeAll
    void deploy() throws Exception {
        images = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "img", "--version", "1", "--beta-ms",
                "0", "--alpha-ms", "0", "--input-type", "bytes", "--classes", Integer.toString(CLASSES));
        vectors = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "vec", "--version", "1", "--beta-ms",
                "0", "--alpha-ms", "0");
        GatewayCalls calls = new GatewayCalls(queryPort, adminServer.port(), json);
        for (String[] m : new String[][] {{"img", "bytes", images.address()}, {"vec", "floats", vectors.address()}}) {
            calls.admin("add_model", Map.of("model_name", m[0], "model_version", "1", "input_type", m[1]));
            calls.admin("add_container", Map.of("model_name", m[0], "model_version", "1", "address", m[2]));
            calls.admin("add_app", Map.of("name", m[0] + "-app", "input_type", m[1], "default_output", "none",
                    "latency_slo_micros", 5_000_000, "candidate_model_names", List.of(m[0])));
            calls.awaitReady(m[0]);
        }
    }

    @AfterAll
    void stop() throws Exception {
        for (ContainerProcess c : new ContainerProcess[] {images, vectors}) {
            if (c != null) {
                c.close();
            }
        }
    }

    @Test
    void uint8ImagesAfterAJsonHeaderAreAnsweredPerImage() throws Exception {
        List<byte[]> batch = images(5, 1);
        String header = "{\"id\":\"r1\",\"inputs\":[{\"name\":\"input\",\"shape\":[5,3,8,8],\"datatype\":\"UINT8\","
                + "\"parameters\":{\"binary_data_size\":" + 5 * IMAGE_BYTES + "}}]}";
        HttpResponse<byte[]> r = infer("img", header, concat(batch), true);
        assertThat(r.statusCode()).as(text(r)).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith(
                "application/json"));
        JsonNode answer = json.readTree(r.body());
        assertThat(answer.path("id").asString()).isEqualTo("r1");
        assertThat(strings(answer.path("outputs").get(0).path("data"))).containsExactlyElementsOf(expected(batch));
        assertThat(new java.util.HashSet<>(expected(batch))).as("labels depend on the bytes").hasSizeGreaterThan(2);
    }

    @Test
    void bytesElementsWithLengthPrefixesAndBinaryOutputsAsTritonDescribesThem() throws Exception {
        List<byte[]> batch = List.of(images(1, 2).get(0), "a short one".getBytes(StandardCharsets.UTF_8), new byte[0]);
        byte[] raw = lengthPrefixed(batch);
        String header = "{\"inputs\":[{\"name\":\"input\",\"shape\":[3],\"datatype\":\"BYTES\",\"parameters\":"
                + "{\"binary_data_size\":" + raw.length + "}}],\"outputs\":[{\"name\":\"output\",\"parameters\":"
                + "{\"binary_data\":true}}]}";
        HttpResponse<byte[]> r = infer("img", header, raw, true);
        assertThat(r.statusCode()).as(text(r)).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/octet-stream");
        int jsonLength = Integer.parseInt(r.headers().firstValue(HEADER).orElseThrow());
        JsonNode answer = json.readTree(new String(r.body(), 0, jsonLength, StandardCharsets.UTF_8));
        JsonNode output = answer.path("outputs").get(0);
        assertThat(output.path("datatype").asString()).isEqualTo("BYTES");
        assertThat(output.path("shape").get(0).asInt()).isEqualTo(3);
        assertThat(output.has("data")).isFalse();
        int size = output.path("parameters").path("binary_data_size").asInt();
        assertThat(jsonLength + size).isEqualTo(r.body().length);
        assertThat(splitLengthPrefixed(r.body(), jsonLength)).containsExactlyElementsOf(expected(batch));

        // the request parameter asks for every output in binary; JSON data in the same request
        String plain = "{\"parameters\":{\"binary_data_output\":true},\"inputs\":[{\"name\":\"input\",\"shape\":[1],"
                + "\"datatype\":\"BYTES\",\"data\":[\"a short one\"]}]}";
        HttpResponse<byte[]> p = infer("img", plain, new byte[0], false);
        assertThat(p.statusCode()).as(text(p)).isEqualTo(200);
        int pj = Integer.parseInt(p.headers().firstValue(HEADER).orElseThrow());
        assertThat(splitLengthPrefixed(p.body(), pj)).containsExactly(expected(batch).get(1));
    }

    @Test
    void numericTensorsInBinaryForm() throws Exception {
        ByteBuffer rows = ByteBuffer.allocate(2 * 4 * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        rows.asFloatBuffer().put(new float[] {0, 0, 9, 0, 5, 0, 0, 0});
        String header = "{\"inputs\":[{\"name\":\"input\",\"shape\":[2,4],\"datatype\":\"FP32\",\"parameters\":"
                + "{\"binary_data_size\":32}}]}";
        HttpResponse<byte[]> r = infer("vec", header, rows.array(), true);
        assertThat(r.statusCode()).as(text(r)).isEqualTo(200);
        assertThat(strings(json.readTree(r.body()).path("outputs").get(0).path("data"))).containsExactly("2", "0");
        // a binary row is checked as a JSON row is
        rows.asFloatBuffer().put(5, Float.NaN);
        assertProblem(infer("vec", header, rows.array(), true), 400, "row 1 element 1 is not a finite number");
    }

    @Test
    void octetStreamBodiesAreOneRawInputAndBase64JsonStillWorks() throws Exception {
        byte[] image = images(1, 3).get(0);
        String label = expected(List.of(image)).get(0);
        HttpResponse<byte[]> raw = post("/img-app/predict", "application/octet-stream", image, Map.of());
        assertThat(raw.statusCode()).as(text(raw)).isEqualTo(200);
        JsonNode answer = json.readTree(raw.body());
        assertThat(answer.path("output").asString()).isEqualTo(label);
        assertThat(answer.path("default").asBoolean()).isFalse();
        byte[] base64 = ("{\"input\":\"" + Base64.getEncoder().encodeToString(image) + "\"}")
                .getBytes(StandardCharsets.UTF_8);
        HttpResponse<byte[]> viaJson = post("/img-app/predict", "application/json", base64, Map.of());
        assertThat(json.readTree(viaJson.body()).path("output").asString()).isEqualTo(label);

        assertProblem(post("/vec-app/predict", "application/octet-stream", new byte[16], Map.of()), 415,
                "input type 'floats'");
        assertProblem(post("/img-app/predict", "image/png", image, Map.of()), 415, "application/octet-stream");
        assertProblem(post("/img-app/predict", "application/octet-stream", new byte[0], Map.of()), 400,
                "body is empty");
        assertProblem(post("/nope/predict", "application/octet-stream", image, Map.of()), 404, "unknown application");
    }

    @Test
    void rawBytesSentWithoutTheirTypeAreToldToUseOctetStream() throws Exception {
        byte[] image = images(1, 6).get(0);
        image[0] = (byte) 0xc8; // not UTF-8, as most images are not
        // curl --data-binary @image sends a form type; other clients send none, or text
        for (String type : new String[] {null, "application/x-www-form-urlencoded", "text/plain; x-note=zz-marker",
                "*/*"}) {
            HttpResponse<byte[]> r = post("/img-app/predict", type, image, Map.of());
            assertProblem(r, 415, "Content-Type: application/octet-stream");
            assertThat(text(r)).as("the request's type is named by its kind, not quoted").doesNotContain("zz-marker");
        }
        // a body declared JSON is malformed JSON; an app of another input type is not told about raw bytes
        assertProblem(post("/img-app/predict", "application/json", image, Map.of()), 400, "malformed JSON");
        HttpResponse<byte[]> floats = post("/vec-app/predict", "application/x-www-form-urlencoded", image, Map.of());
        assertProblem(floats, 400, "malformed JSON");
        assertThat(text(floats)).doesNotContain("octet-stream");
    }

    @Test
    void base64JsonIsReadInEveryFormAClientMaySendIt() throws Exception {
        List<byte[]> two = images(2, 5);
        String a = Base64.getEncoder().encodeToString(two.get(0));
        String b = Base64.getEncoder().encodeToString(two.get(1));
        List<String> labels = expected(two);
        for (String body : List.of("{\"input\":\"" + a + "\"}",
                " { \"uid\" : 7 ,\n \"input\" : \"" + a + "\" , \"version\": \"1\" } ",
                "{\"input\":\"" + a.replace("/", "\\/") + "\"}")) {
            HttpResponse<byte[]> r = post("/img-app/predict", "application/json", utf8(body), Map.of());
            assertThat(r.statusCode()).as(text(r)).isEqualTo(200);
            assertThat(json.readTree(r.body()).path("output").asString()).as(body.substring(0, 20)).isEqualTo(
                    labels.get(0));
        }
        HttpResponse<byte[]> batch = post("/img-app/predict", "application/json",
                utf8("{\"input_batch\":[\"" + a + "\",\"" + b + "\"]}"), Map.of());
        List<String> outputs = new ArrayList<>();
        json.readTree(batch.body()).path("batch_predictions").forEach(p -> outputs.add(p.path("output").asString()));
        assertThat(outputs).containsExactlyElementsOf(labels);
        assertProblem(post("/img-app/predict", "application/json", utf8("{\"input\":\"ab$c\"}"), Map.of()), 400,
                "not valid base64");
        assertProblem(post("/img-app/predict", "application/json", utf8("{\"input\":\"" + a + "\",\"input_batch\":[]}"),
                Map.of()), 400, "exactly one of 'input' and 'input_batch'");
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void everyInconsistencyIsA400NamingIt() throws Exception {
        byte[] two = concat(images(2, 4));
        String uint8 = "{\"inputs\":[{\"name\":\"input\",\"shape\":[2,3,8,8],\"datatype\":\"UINT8\","
                + "\"parameters\":{\"binary_data_size\":%d}}]}";
        String ok = uint8.formatted(two.length);
        record Bad(String header, byte[] binary, Map<String, String> headers, String says) {
        }
        List<Bad> bad = List.of(
                new Bad(ok, two, Map.of(), HEADER + " header"),
                new Bad(ok, two, Map.of(HEADER, "12x"), "must be a number of bytes"),
                new Bad(ok, two, Map.of(HEADER, "-5"), "must be positive"),
                new Bad(ok, two, Map.of(HEADER, "999999"), "the body has only"),
                new Bad(ok, two, Map.of(HEADER, "20"), "malformed JSON"),
                new Bad(uint8.formatted(two.length + 1), two, null, "only " + two.length + " bytes of binary data"),
                new Bad(uint8.formatted(two.length - 1), two, null, "add up to " + (two.length - 1)),
                new Bad(uint8.formatted(-1), two, null, "non-negative integer"),
                new Bad(uint8.formatted(IMAGE_BYTES), Bytes.slice(two, IMAGE_BYTES), null, "needs " + 2 * IMAGE_BYTES),
                new Bad(ok.replace("\"UINT8\"", "\"FP32\""), two, null, "does not match the model's input type"),
                new Bad(ok.replace("}}]}", "},\"data\":[1]}]}"), two, null, "both 'data' and 'binary_data_size'"),
                new Bad(ok.replace("[2,3,8,8]", "[2,0,8,8]"), two, null, "positive integers"),
                new Bad(ok.replace("}}]}", "}}],\"outputs\":[{\"name\":\"probs\"}]}"), two, null, "no output 'probs'"),
                new Bad(ok.replace("}}]}", "}}],\"outputs\":[{\"name\":\"output\",\"parameters\":{\"binary_data\":1}}]}"),
                        two, null, "must be true or false"));
        for (Bad b : bad) {
            byte[] head = b.header().getBytes(StandardCharsets.UTF_8);
            Map<String, String> headers = b.headers() != null ? b.headers() : Map.of(HEADER, Integer.toString(head.length));
            HttpResponse<byte[]> r = post("/v2/models/img/infer", "application/octet-stream", Bytes.join(head, b.binary()),
                    headers);
            assertProblem(r, 400, b.says());
        }
        // a body sent with binary_data_size but no header length: the JSON parser meets the bytes
        HttpResponse<byte[]> noHeader = post("/v2/models/img/infer", "application/json",
                Bytes.join(ok.getBytes(StandardCharsets.UTF_8), two), Map.of());
        assertProblem(noHeader, 400, HEADER);

        HttpResponse<byte[]> metadata = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + queryPort
                + "/v2")).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(strings(json.readTree(metadata.body()).path("extensions"))).contains("binary_tensor_data");
    }

    private void assertProblem(HttpResponse<byte[]> r, int status, String says) {
        assertThat(r.statusCode()).as(text(r)).isEqualTo(status);
        JsonNode body = json.readTree(r.body());
        // the OIP endpoints answer the protocol's {error}; the Clipper ones {error, cause}
        boolean oip = r.request().uri().getPath().startsWith("/v2/");
        assertThat(body.path("error").isString()).as(text(r)).isTrue();
        assertThat(body.path(oip ? "error" : "cause").asString()).as(text(r)).contains(says);
    }

    private HttpResponse<byte[]> infer(String model, String header, byte[] binary, boolean withLength)
            throws Exception {
        byte[] head = header.getBytes(StandardCharsets.UTF_8);
        return post("/v2/models/" + model + "/infer", "application/octet-stream", Bytes.join(head, binary),
                withLength ? Map.of(HEADER, Integer.toString(head.length)) : Map.of());
    }

    private HttpResponse<byte[]> post(String path, String contentType, byte[] body, Map<String, String> headers)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + queryPort + path))
                .timeout(Duration.ofSeconds(20)).POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        headers.forEach(b::header);
        return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private List<String> expected(List<byte[]> batch) {
        List<String> out = new ArrayList<>();
        for (byte[] b : batch) {
            out.add(Integer.toString(labels.label(b)));
        }
        return out;
    }

    private static List<byte[]> images(int n, long seed) {
        Random random = new Random(seed);
        List<byte[]> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] b = new byte[IMAGE_BYTES];
            random.nextBytes(b);
            out.add(b);
        }
        return out;
    }

    private static byte[] concat(List<byte[]> parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        parts.forEach(out::writeBytes);
        return out.toByteArray();
    }

    private static byte[] lengthPrefixed(List<byte[]> elements) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] e : elements) {
            out.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(e.length).array());
            out.writeBytes(e);
        }
        return out.toByteArray();
    }

    private static List<String> splitLengthPrefixed(byte[] body, int from) {
        ByteBuffer buf = ByteBuffer.wrap(body, from, body.length - from).order(ByteOrder.LITTLE_ENDIAN);
        List<String> out = new ArrayList<>();
        while (buf.hasRemaining()) {
            byte[] e = new byte[buf.getInt()];
            buf.get(e);
            out.add(new String(e, StandardCharsets.UTF_8));
        }
        return out;
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asString()));
        return out;
    }

    private static String text(HttpResponse<byte[]> r) {
        return r.statusCode() + " " + new String(r.body(), StandardCharsets.UTF_8);
    }

    /** Byte array helpers. */
    private static final class Bytes {
        static byte[] join(byte[] a, byte[] b) {
            byte[] out = new byte[a.length + b.length];
            System.arraycopy(a, 0, out, 0, a.length);
            System.arraycopy(b, 0, out, a.length, b.length);
            return out;
        }

        static byte[] slice(byte[] a, int length) {
            byte[] out = new byte[length];
            System.arraycopy(a, 0, out, 0, length);
            return out;
        }
    }
}
