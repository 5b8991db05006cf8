package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.servegate.containers.emulated.EmulatedPredictor;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.FreePort;
import io.servegate.gateway.testsupport.GatewayCalls;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelMetadataRequest;
import io.servegate.oip.ModelMetadataResponse;
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
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * The gateway checks every input against what the model's containers declare in their OIP
 * metadata (a {@code bytes} model's UINT8 shape, a numeric model's length) before it is queued,
 * on every entry point, so that a wrong-sized input gets a 400 naming both sizes and never fails
 * the batch of other clients' queries; and it reports the declared datatype and shape as the
 * model's metadata. The emulated containers here enforce their declared shapes as real ones do:
 * one wrong input in a batch fails the whole batch with INVALID_ARGUMENT.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "servegate.admin.port=0"})
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class InputValidationEndToEndTest {

    private static final int GRPC_PORT = FreePort.pick();
    private static final int CLASSES = 1000;
    /** 3 x 8 x 8 uint8 images, as the bytes container declares them. */
    private static final int IMAGE_BYTES = 3 * 8 * 8;

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
    private ManagedChannel channel;

    @DynamicPropertySource
    static void grpcPort(DynamicPropertyRegistry properties) {
        properties.add("servegate.oip.grpc-port", () -> GRPC_PORT);
    }

    @BeforeAll
    void deploy() throws Exception {
        // 20 ms a batch: concurrent queries share batches, as in production
        images = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "img", "--version", "1", "--beta-ms",
                "20", "--alpha-ms", "0", "--input-type", "bytes", "--input-shape", "3,8,8", "--classes",
                Integer.toString(CLASSES));
        vectors = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "vec", "--version", "1", "--beta-ms",
                "1", "--alpha-ms", "0", "--input-shape", "4");
        GatewayCalls calls = new GatewayCalls(queryPort, adminServer.port(), json);
        for (String[] m : new String[][] {{"img", "bytes", images.address()}, {"vec", "floats", vectors.address()}}) {
            calls.admin("add_model", Map.of("model_name", m[0], "model_version", "1", "input_type", m[1]));
            calls.admin("add_container", Map.of("model_name", m[0], "model_version", "1", "address", m[2]));
            calls.admin("add_app", Map.of("name", m[0] + "-app", "input_type", m[1], "default_output", "none",
                    "latency_slo_micros", 10_000_000, "candidate_model_names", List.of(m[0])));
            calls.awaitReady(m[0]);
        }
        calls.admin("add_model", Map.of("model_name", "ghost", "model_version", "1", "input_type", "bytes"));
        channel = NettyChannelBuilder.forAddress("127.0.0.1", GRPC_PORT).usePlaintext().build();
    }

    @AfterAll
    void stop() throws Exception {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        for (ContainerProcess c : new ContainerProcess[] {images, vectors}) {
            if (c != null) {
                c.close();
            }
        }
    }

    @Test
    void wrongSizedImagesSentWithGoodOnesAreRefusedAndSpoilNoBatch() throws Exception {
        List<byte[]> good = images(20, IMAGE_BYTES, 1);
        List<byte[]> wrong = images(20, 100, 2);
        List<CompletableFuture<HttpResponse<byte[]>>> goodAnswers = new ArrayList<>();
        List<CompletableFuture<HttpResponse<byte[]>>> wrongAnswers = new ArrayList<>();
        for (int i = 0; i < 20; i++) { // interleaved, every form of /{app}/predict
            goodAnswers.add(predict(good.get(i), i % 2 == 0));
            wrongAnswers.add(i % 5 == 4 ? batchOf(good.get(i), wrong.get(i)) : predict(wrong.get(i), i % 2 == 0));
        }
        for (int i = 0; i < 20; i++) {
            HttpResponse<byte[]> r = goodAnswers.get(i).get(30, TimeUnit.SECONDS);
            assertThat(r.statusCode()).as(text(r)).isEqualTo(200);
            JsonNode answer = json.readTree(r.body());
            assertThat(answer.path("default").asBoolean()).as(text(r)).isFalse();
            assertThat(answer.path("output").asString()).isEqualTo(Integer.toString(labels.label(good.get(i))));
        }
        for (int i = 0; i < 20; i++) {
            HttpResponse<byte[]> r = wrongAnswers.get(i).get(30, TimeUnit.SECONDS);
            assertProblem(r, 400, "has 100 bytes; the model expects " + IMAGE_BYTES);
        }
    }

    @Test
    void numericInputsOfTheWrongLengthAreRefusedOnEveryEntryPoint() throws Exception {
        assertThat(post("/vec-app/predict", "application/json", utf8("{\"input\":[0,9,0,0]}"), Map.of()).statusCode())
                .isEqualTo(200);
        assertProblem(post("/vec-app/predict", "application/json", utf8("{\"input\":[1,2,3]}"), Map.of()), 400,
                "has 3 elements; the model expects 4");
        assertProblem(post("/vec-app/predict", "application/json",
                utf8("{\"input_batch\":[[1,2,3,4],[1,2,3,4,5]]}"), Map.of()), 400,
                "'input_batch[1]' has 5 elements; the model expects 4");
        String oip = "{\"inputs\":[{\"name\":\"input\",\"shape\":[1,%d],\"datatype\":\"FP32\",\"data\":%s}]}";
        assertThat(post("/v2/models/vec/infer", "application/json", utf8(oip.formatted(4, "[1,2,3,4]")), Map.of())
                .statusCode()).isEqualTo(200);
        assertProblem(post("/v2/models/vec/infer", "application/json", utf8(oip.formatted(3, "[1,2,3]")), Map.of()),
                400, "shape [1, 3] does not match the shape [-1, 4]");
        assertThatThrownBy(() -> stub().modelInfer(ModelInferRequest.newBuilder().setModelName("vec")
                .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("FP32")
                        .addShape(1).addShape(3))
                .addRawInputContents(ByteString.copyFrom(new byte[12])).build()))
                .isInstanceOf(StatusRuntimeException.class)
                .hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("does not match the shape [-1, 4]");
    }

    @Test
    void oipRequestsOfTheWrongShapeAreRefused() throws Exception {
        byte[] two = new byte[2 * IMAGE_BYTES];
        String header = "{\"inputs\":[{\"name\":\"input\",\"shape\":%s,\"datatype\":\"UINT8\","
                + "\"parameters\":{\"binary_data_size\":" + two.length + "}}]}";
        assertThat(infer(header.formatted("[2,3,8,8]"), two).statusCode()).isEqualTo(200);
        assertProblem(infer(header.formatted("[2,192]"), two), 400,
                "shape [2, 192] does not match the shape [-1, 3, 8, 8] the model's containers declare for UINT8");
        assertProblem(infer(header.formatted("[2,8,8,3]"), two), 400, "does not match the shape [-1, 3, 8, 8]");
        // BYTES elements are checked by their length
        String bytes = "{\"inputs\":[{\"name\":\"input\",\"shape\":[1],\"datatype\":\"BYTES\",\"data\":[\"short\"]}]}";
        assertProblem(post("/v2/models/img/infer", "application/json", utf8(bytes), Map.of()), 400,
                "has 5 bytes; the model expects " + IMAGE_BYTES);
        assertThatThrownBy(() -> stub().modelInfer(ModelInferRequest.newBuilder().setModelName("img")
                .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("UINT8")
                        .addShape(1).addShape(8).addShape(8).addShape(3))
                .addRawInputContents(ByteString.copyFrom(new byte[IMAGE_BYTES])).build()))
                .isInstanceOf(StatusRuntimeException.class)
                .hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("does not match the shape [-1, 3, 8, 8]");
    }

    @Test
    void modelMetadataSaysWhatTheContainersDeclare() throws Exception {
        JsonNode img = json.readTree(get("/v2/models/img").body());
        assertThat(img.path("inputs").get(0).path("datatype").asString()).isEqualTo("UINT8");
        assertThat(longs(img.path("inputs").get(0).path("shape"))).containsExactly(-1L, 3L, 8L, 8L);
        JsonNode vec = json.readTree(get("/v2/models/vec").body());
        assertThat(longs(vec.path("inputs").get(0).path("shape"))).containsExactly(-1L, 4L);
        // nothing known (no replica): the registered type
        JsonNode ghost = json.readTree(get("/v2/models/ghost").body());
        assertThat(ghost.path("inputs").get(0).path("datatype").asString()).isEqualTo("BYTES");
        assertThat(longs(ghost.path("inputs").get(0).path("shape"))).containsExactly(-1L);

        ModelMetadataResponse grpc = stub().modelMetadata(ModelMetadataRequest.newBuilder().setName("img").build());
        assertThat(grpc.getInputs(0).getDatatype()).isEqualTo("UINT8");
        assertThat(grpc.getInputs(0).getShapeList()).containsExactly(-1L, 3L, 8L, 8L);
    }

    private GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub stub() {
        return GRPCInferenceServiceGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
    }

    /** One image to the bytes app: as a raw body, or base64 in JSON. */
    private CompletableFuture<HttpResponse<byte[]>> predict(byte[] image, boolean raw) {
        return raw ? postAsync("/img-app/predict", "application/octet-stream", image)
                : postAsync("/img-app/predict", "application/json",
                        utf8("{\"input\":\"" + Base64.getEncoder().encodeToString(image) + "\"}"));
    }

    private CompletableFuture<HttpResponse<byte[]>> batchOf(byte[] a, byte[] b) {
        Base64.Encoder e = Base64.getEncoder();
        return postAsync("/img-app/predict", "application/json",
                utf8("{\"input_batch\":[\"" + e.encodeToString(a) + "\",\"" + e.encodeToString(b) + "\"]}"));
    }

    private HttpResponse<byte[]> infer(String header, byte[] binary) throws Exception {
        byte[] head = utf8(header);
        byte[] body = new byte[head.length + binary.length];
        System.arraycopy(head, 0, body, 0, head.length);
        System.arraycopy(binary, 0, body, head.length, binary.length);
        return post("/v2/models/img/infer", "application/octet-stream", body,
                Map.of("Inference-Header-Content-Length", Integer.toString(head.length)));
    }

    private CompletableFuture<HttpResponse<byte[]>> postAsync(String path, String contentType, byte[] body) {
        return http.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + queryPort + path))
                .timeout(Duration.ofSeconds(20)).header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private HttpResponse<byte[]> post(String path, String contentType, byte[] body, Map<String, String> headers)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + queryPort + path))
                .timeout(Duration.ofSeconds(20)).header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(b::header);
        return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private HttpResponse<byte[]> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + queryPort + path))
                .timeout(Duration.ofSeconds(20)).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private void assertProblem(HttpResponse<byte[]> r, int status, String says) {
        assertThat(r.statusCode()).as(text(r)).isEqualTo(status);
        assertThat(text(r)).contains(says);
    }

    private static List<byte[]> images(int n, int size, long seed) {
        Random random = new Random(seed);
        List<byte[]> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            byte[] b = new byte[size];
            random.nextBytes(b);
            out.add(b);
        }
        return out;
    }

    private static List<Long> longs(JsonNode array) {
        List<Long> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asLong()));
        return out;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(HttpResponse<byte[]> r) {
        return r.statusCode() + " " + new String(r.body(), StandardCharsets.UTF_8);
    }
}
