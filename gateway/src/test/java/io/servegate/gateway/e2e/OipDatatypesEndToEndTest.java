package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.FreePort;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.InferTensorContents;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelInferResponse;
import io.servegate.gateway.testsupport.GatewayCalls;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import io.servegate.sdk.Predictor;
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
import java.util.List;
import java.util.Map;
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
 * Every Open Inference Protocol datatype, as JSON {@code data} and as binary tensor data, answered
 * as JSON and as binary outputs, and over OIP gRPC in raw and typed contents, through a real gateway to real SDK containers (gRPC over loopback)
 * that echo what they received: each answer must be the values sent, as the model's input type
 * holds them. Values that a model's type cannot hold, and datatypes it does not take, are a 400
 * whose {@code error} (the protocol's error body) names the problem.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "servegate.admin.port=0")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OipDatatypesEndToEndTest {

    private static final String HEADER = "Inference-Header-Content-Length";

    private static final int GRPC_PORT = FreePort.pick();

    @LocalServerPort
    int queryPort;

    @DynamicPropertySource
    static void grpcPort(DynamicPropertyRegistry properties) {
        properties.add("servegate.oip.grpc-port", () -> GRPC_PORT);
    }

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final List<ModelContainer<?, ?>> containers = new ArrayList<>();

    /**
     * One tensor [2, 3] of a datatype: its JSON values, its little-endian bytes, the model it goes
     * to and the two rows that model's echo must answer.
     */
    record Case(String datatype, String model, String jsonData, byte[] binary, List<String> expected) {
    }

    @BeforeAll
    void deploy() throws Exception {
        GatewayCalls calls = new GatewayCalls(queryPort, adminServer.port(), json);
        start(calls, "ints", TensorType.INTS, batch -> batch.stream().map(TensorType.INTS::render).toList());
        start(calls, "floats", TensorType.FLOATS, batch -> batch.stream().map(TensorType.FLOATS::render).toList());
        start(calls, "doubles", TensorType.DOUBLES, batch -> batch.stream().map(TensorType.DOUBLES::render).toList());
        start(calls, "bytes", TensorType.BYTES, batch -> batch.stream().map(OipDatatypesEndToEndTest::unsigned).toList());
        start(calls, "strings", TensorType.STRINGS, batch -> batch);
    }

    private <T> void start(GatewayCalls calls, String name, TensorType<T> type, Predictor<T, String> echo)
            throws Exception {
        ModelContainer<T, String> c = ModelContainer.builder(type, TensorType.STRINGS, echo).name(name).version("1")
                .host("127.0.0.1").port(0).build().start();
        containers.add(c);
        calls.admin("add_model", Map.of("model_name", name, "model_version", "1", "input_type", name));
        calls.admin("add_container", Map.of("model_name", name, "model_version", "1",
                "address", "127.0.0.1:" + c.port()));
        calls.awaitReady(name);
    }

    @AfterAll
    void stop() {
        containers.forEach(ModelContainer::close);
    }

    private static List<Case> cases() {
        return List.of(
                new Case("BOOL", "ints", "[true,false,true,false,false,true]", bytes(1, 0, 1, 0, 0, 1),
                        List.of("[1,0,1]", "[0,0,1]")),
                new Case("UINT8", "ints", "[0,7,255,1,2,3]", bytes(0, 7, 255, 1, 2, 3),
                        List.of("[0,7,255]", "[1,2,3]")),
                new Case("UINT8", "bytes", "[0,7,255,1,2,3]", bytes(0, 7, 255, 1, 2, 3),
                        List.of("0,7,255", "1,2,3")),
                new Case("INT8", "bytes", "[-128,-1,127,0,1,2]", bytes(-128, -1, 127, 0, 1, 2),
                        List.of("128,255,127", "0,1,2")),
                new Case("INT8", "ints", "[-128,-1,127,0,1,2]", bytes(-128, -1, 127, 0, 1, 2),
                        List.of("[-128,-1,127]", "[0,1,2]")),
                new Case("UINT16", "ints", "[0,65535,9,1,2,3]", le(2, 0, 65535, 9, 1, 2, 3),
                        List.of("[0,65535,9]", "[1,2,3]")),
                new Case("INT16", "ints", "[-32768,32767,-5,1,2,3]", le(2, -32768, 32767, -5, 1, 2, 3),
                        List.of("[-32768,32767,-5]", "[1,2,3]")),
                new Case("UINT32", "ints", "[0,2147483647,9,1,2,3]", le(4, 0, 2147483647L, 9, 1, 2, 3),
                        List.of("[0,2147483647,9]", "[1,2,3]")),
                new Case("INT32", "ints", "[-2147483648,2147483647,-5,1,2,3]",
                        le(4, -2147483648L, 2147483647L, -5, 1, 2, 3),
                        List.of("[-2147483648,2147483647,-5]", "[1,2,3]")),
                new Case("UINT64", "ints", "[0,2147483647,9,1,2,3]", le(8, 0, 2147483647L, 9, 1, 2, 3),
                        List.of("[0,2147483647,9]", "[1,2,3]")),
                new Case("INT64", "ints", "[-2147483648,2147483647,-5,1,2,3]",
                        le(8, -2147483648L, 2147483647L, -5, 1, 2, 3),
                        List.of("[-2147483648,2147483647,-5]", "[1,2,3]")),
                new Case("INT64", "doubles", "[9007199254740992,-3,0,1,2,3]", le(8, 1L << 53, -3, 0, 1, 2, 3),
                        List.of("[9.007199254740992E15,-3.0,0.0]", "[1.0,2.0,3.0]")),
                // 0.5, -2, 65504 (FP16's largest), 1, 0.25, -1.5
                new Case("FP16", "floats", "[0.5,-2,65504,1,0.25,-1.5]",
                        le(2, 0x3800, 0xC000, 0x7BFF, 0x3C00, 0x3400, 0xBE00),
                        List.of("[0.5,-2.0,65504.0]", "[1.0,0.25,-1.5]")),
                new Case("FP32", "floats", "[0.1,-2.5,3.4E38,1,2,3]", fp32(0.1f, -2.5f, 3.4e38f, 1, 2, 3),
                        List.of("[0.1,-2.5,3.4E38]", "[1.0,2.0,3.0]")),
                new Case("FP64", "doubles", "[0.1,1.0E300,-5.5,1,2,3]", fp64(0.1, 1e300, -5.5, 1, 2, 3),
                        List.of("[0.1,1.0E300,-5.5]", "[1.0,2.0,3.0]")),
                // numpy's default float: FP64 values for an FP32 model, rounded to the nearest float
                new Case("FP64", "floats", "[0.1,-2.5,1E10,1,2,3]", fp64(0.1, -2.5, 1e10, 1, 2, 3),
                        List.of("[0.1,-2.5,1.0E10]", "[1.0,2.0,3.0]")),
                new Case("FP32", "ints", "[1,-2,3,4,5,6]", fp32(1, -2, 3, 4, 5, 6), List.of("[1,-2,3]", "[4,5,6]")));
    }

    @Test
    void everyDatatypeRoundTripsAsJsonAndBinaryWithJsonAndBinaryOutputs() throws Exception {
        List<String> covered = new ArrayList<>();
        for (Case c : cases()) {
            for (boolean binaryIn : new boolean[] {false, true}) {
                for (boolean binaryOut : new boolean[] {false, true}) {
                    String what = c.datatype() + " to " + c.model() + (binaryIn ? " binary" : " JSON") + " in, "
                            + (binaryOut ? "binary" : "JSON") + " out";
                    String input = "{\"name\":\"input\",\"datatype\":\"" + c.datatype() + "\",\"shape\":[2,3],"
                            + (binaryIn ? "\"parameters\":{\"binary_data_size\":" + c.binary().length + "}"
                                    : "\"data\":" + c.jsonData());
                    assertThat(infer(c.model(), input + "}", binaryIn ? c.binary() : null, binaryOut)).as(what)
                            .containsExactlyElementsOf(c.expected());
                }
            }
            covered.add(c.datatype());
        }
        assertThat(covered).containsAll(List.of("BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16",
                "INT32", "INT64", "FP16", "FP32", "FP64"));
    }

    @Test
    void everyDatatypeRoundTripsOverGrpcInRawAndTypedContents() throws Exception {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", GRPC_PORT).usePlaintext().build();
        try {
            GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub stub = GRPCInferenceServiceGrpc
                    .newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
            for (Case c : cases()) {
                ModelInferRequest.InferInputTensor.Builder tensor = ModelInferRequest.InferInputTensor.newBuilder()
                        .setName("input").setDatatype(c.datatype()).addShape(2).addShape(3);
                ModelInferRequest raw = ModelInferRequest.newBuilder().setModelName(c.model())
                        .addInputs(tensor).addRawInputContents(ByteString.copyFrom(c.binary())).build();
                assertThat(rows(stub.modelInfer(raw))).as(c.datatype() + " to " + c.model() + ", raw")
                        .containsExactlyElementsOf(c.expected());
                if (!c.datatype().equals("FP16")) {
                    ModelInferRequest typed = ModelInferRequest.newBuilder().setModelName(c.model())
                            .addInputs(tensor.setContents(contents(c.datatype(), json.readTree(c.jsonData())))).build();
                    assertThat(rows(stub.modelInfer(typed))).as(c.datatype() + " to " + c.model() + ", typed")
                            .containsExactlyElementsOf(c.expected());
                }
            }
            ModelInferRequest wide = ModelInferRequest.newBuilder().setModelName("ints")
                    .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("INT64")
                            .addShape(1).addShape(1).setContents(InferTensorContents.newBuilder()
                                    .addInt64Contents(4294967296L)))
                    .build();
            assertThatThrownBy(() -> stub.modelInfer(wide)).isInstanceOf(StatusRuntimeException.class)
                    .hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("(4294967296) does not fit");
            ModelInferRequest strings = ModelInferRequest.newBuilder().setModelName("strings")
                    .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("UINT8")
                            .addShape(1).addShape(1).setContents(InferTensorContents.newBuilder().addUintContents(1)))
                    .build();
            assertThatThrownBy(() -> stub.modelInfer(strings)).isInstanceOf(StatusRuntimeException.class)
                    .hasMessageContaining("INVALID_ARGUMENT").hasMessageContaining("which takes BYTES");
        } finally {
            channel.shutdownNow();
        }
    }

    /** The typed contents field the protocol gives {@code datatype}, holding the JSON array's values. */
    private static InferTensorContents contents(String datatype, JsonNode values) {
        InferTensorContents.Builder b = InferTensorContents.newBuilder();
        for (JsonNode v : values) {
            switch (datatype) {
                case "BOOL" -> b.addBoolContents(v.booleanValue());
                case "INT8", "INT16", "INT32" -> b.addIntContents((int) v.longValue());
                case "INT64" -> b.addInt64Contents(v.longValue());
                case "UINT8", "UINT16", "UINT32" -> b.addUintContents((int) v.longValue());
                case "UINT64" -> b.addUint64Contents(v.longValue());
                case "FP32" -> b.addFp32Contents((float) v.doubleValue());
                case "FP64" -> b.addFp64Contents(v.doubleValue());
                default -> throw new IllegalArgumentException(datatype);
            }
        }
        return b.build();
    }

    /** The rows of a gRPC answer's BYTES output, raw or in typed contents. */
    private static List<String> rows(ModelInferResponse response) {
        List<String> out = new ArrayList<>();
        if (response.getRawOutputContentsCount() == 0) {
            response.getOutputs(0).getContents().getBytesContentsList().forEach(b -> out.add(b.toStringUtf8()));
            return out;
        }
        ByteBuffer buf = response.getRawOutputContents(0).asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        while (buf.hasRemaining()) {
            byte[] e = new byte[buf.getInt()];
            buf.get(e);
            out.add(new String(e, StandardCharsets.UTF_8));
        }
        return out;
    }

    @Test
    void bytesRoundTripAsJsonAndBinaryWithJsonAndBinaryOutputs() throws Exception {
        List<String> values = List.of("héllo", "", "a\u0000b");
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        for (String v : values) {
            byte[] b = v.getBytes(StandardCharsets.UTF_8);
            raw.writeBytes(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(b.length).array());
            raw.writeBytes(b);
        }
        for (String model : List.of("strings", "bytes")) {
            List<String> expected = model.equals("strings") ? values
                    : values.stream().map(v -> unsigned(v.getBytes(StandardCharsets.UTF_8))).toList();
            for (boolean binaryOut : new boolean[] {false, true}) {
                assertThat(infer(model, "{\"name\":\"input\",\"datatype\":\"BYTES\",\"shape\":[3],\"data\":"
                        + json.writeValueAsString(values) + "}", null, binaryOut)).as(model).isEqualTo(expected);
                assertThat(infer(model, "{\"name\":\"input\",\"datatype\":\"BYTES\",\"shape\":[3],"
                        + "\"parameters\":{\"binary_data_size\":" + raw.size() + "}}", raw.toByteArray(), binaryOut))
                        .as(model).isEqualTo(expected);
            }
        }
    }

    @Test
    void valuesAModelCannotHoldAndDatatypesItDoesNotTakeAreRefusedByName() throws Exception {
        record Bad(String model, String input, byte[] binary, String says) {
        }
        List<Bad> bad = List.of(
                new Bad("ints", "\"INT64\",\"shape\":[1,1],\"data\":[4294967296]", null,
                        "element 0 (4294967296) does not fit the model's input type 'ints'"),
                new Bad("ints", "\"UINT64\",\"shape\":[1,1],\"parameters\":{\"binary_data_size\":8}", le(8, -1L),
                        "UINT64 element 0 (18446744073709551615)"),
                new Bad("ints", "\"FP32\",\"shape\":[1,1],\"data\":[1.5]", null, "(1.5) does not fit"),
                new Bad("floats", "\"INT32\",\"shape\":[1,1],\"data\":[16777217]", null, "(16777217) does not fit"),
                new Bad("ints", "\"UINT8\",\"shape\":[1,1],\"data\":[256]", null, "UINT8's range [0, 255]"),
                new Bad("ints", "\"BOOL\",\"shape\":[1,1],\"data\":[1]", null, "true or false"),
                new Bad("floats", "\"FP16\",\"shape\":[1,1],\"data\":[70000]", null, "beyond FP16's range"),
                new Bad("ints", "\"BYTES\",\"shape\":[1],\"data\":[\"1\"]", null, "takes BOOL, UINT8"),
                new Bad("strings", "\"UINT8\",\"shape\":[1,1],\"data\":[1]", null, "which takes BYTES"),
                new Bad("ints", "\"INT128\",\"shape\":[1,1],\"data\":[1]", null, "unknown datatype 'INT128'"),
                new Bad("ints", "\"INT16\",\"shape\":[1,2],\"parameters\":{\"binary_data_size\":2}", le(2, 1),
                        "2 bytes, but 1 rows of 2 INT16 elements need 4"));
        for (Bad b : bad) {
            HttpResponse<byte[]> r = send(b.model(), "{\"name\":\"input\",\"datatype\":" + b.input() + "}", b.binary(),
                    false);
            assertThat(r.statusCode()).as(text(r)).isEqualTo(400);
            JsonNode body = json.readTree(r.body());
            assertThat(body.path("error").asString()).as(text(r)).contains(b.says());
            assertThat(body.has("cause")).as("the protocol's error body has only 'error': " + text(r)).isFalse();
        }
    }

    /** The rows answered, read from the JSON or the binary output. */
    private List<String> infer(String model, String input, byte[] binary, boolean binaryOut) throws Exception {
        HttpResponse<byte[]> r = send(model, input, binary, binaryOut);
        assertThat(r.statusCode()).as(text(r)).isEqualTo(200);
        List<String> out = new ArrayList<>();
        if (!binaryOut) {
            json.readTree(r.body()).path("outputs").get(0).path("data").forEach(n -> out.add(n.asString()));
            return out;
        }
        int jsonLength = Integer.parseInt(r.headers().firstValue(HEADER).orElseThrow());
        JsonNode output = json.readTree(new String(r.body(), 0, jsonLength, StandardCharsets.UTF_8))
                .path("outputs").get(0);
        assertThat(output.path("datatype").asString()).isEqualTo("BYTES");
        assertThat(jsonLength + output.path("parameters").path("binary_data_size").asInt()).isEqualTo(r.body().length);
        ByteBuffer buf = ByteBuffer.wrap(r.body(), jsonLength, r.body().length - jsonLength)
                .order(ByteOrder.LITTLE_ENDIAN);
        while (buf.hasRemaining()) {
            byte[] e = new byte[buf.getInt()];
            buf.get(e);
            out.add(new String(e, StandardCharsets.UTF_8));
        }
        return out;
    }

    private HttpResponse<byte[]> send(String model, String input, byte[] binary, boolean binaryOut) throws Exception {
        String header = "{\"inputs\":[" + input + "]" + (binaryOut
                ? ",\"outputs\":[{\"name\":\"output\",\"parameters\":{\"binary_data\":true}}]" : "") + "}";
        byte[] head = header.getBytes(StandardCharsets.UTF_8);
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + queryPort + "/v2/models/"
                + model + "/infer")).timeout(Duration.ofSeconds(20));
        if (binary == null) {
            b.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(head));
        } else {
            byte[] body = new byte[head.length + binary.length];
            System.arraycopy(head, 0, body, 0, head.length);
            System.arraycopy(binary, 0, body, head.length, binary.length);
            b.header("Content-Type", "application/octet-stream").header(HEADER, Integer.toString(head.length))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static String unsigned(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            s.append(s.isEmpty() ? "" : ",").append(x & 0xff);
        }
        return s.toString();
    }

    private static byte[] bytes(int... values) {
        byte[] out = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = (byte) values[i];
        }
        return out;
    }

    /** Little-endian integers of {@code size} bytes each (the low bytes of each value). */
    private static byte[] le(int size, long... values) {
        ByteBuffer buf = ByteBuffer.allocate(size * values.length).order(ByteOrder.LITTLE_ENDIAN);
        for (long v : values) {
            byte[] full = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
            buf.put(full, 0, size);
        }
        return buf.array();
    }

    private static byte[] fp32(float... values) {
        ByteBuffer buf = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float v : values) {
            buf.putFloat(v);
        }
        return buf.array();
    }

    private static byte[] fp64(double... values) {
        ByteBuffer buf = ByteBuffer.allocate(8 * values.length).order(ByteOrder.LITTLE_ENDIAN);
        for (double v : values) {
            buf.putDouble(v);
        }
        return buf.array();
    }

    private static String text(HttpResponse<byte[]> r) {
        return r.statusCode() + " " + new String(r.body(), StandardCharsets.UTF_8);
    }
}
