package io.servegate.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.registry.Application;
import io.servegate.gateway.registry.ModelVersion;
import io.servegate.gateway.registry.Registry;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.InferTensorContents;
import io.servegate.oip.ModelInferRequest;
import io.servegate.oip.ModelMetadataRequest;
import io.servegate.oip.ModelReadyRequest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Query keys on every endpoint that reaches a keyed app, over REST and gRPC: a missing, wrong,
 * revoked or rotated key gets 401 (UNAUTHENTICATED) naming nothing of the app; a valid key gets
 * past the check (to the default or to "no replica", as there is none); an app without keys is
 * open as before; and the admin API never shows a key again. Subclasses pick the registry.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class QueryKeysContract {

    static final JsonMapper JSON = JsonMapper.builder().build();

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    Registry registry;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private ManagedChannel channel;

    abstract int grpcPort();

    @BeforeAll
    void setUp() {
        registry.addModel(new ModelVersion("km", "1", List.of(), "floats", "", "", -1)).block();
        registry.addModel(new ModelVersion("om", "1", List.of(), "floats", "", "", -1)).block();
        registry.addApp(new Application("keyed", "floats", "-1", 20_000, List.of("km"))).block();
        registry.addApp(new Application("open", "floats", "-1", 20_000, List.of("om"))).block();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", grpcPort()).usePlaintext().build();
    }

    @AfterAll
    void tearDown() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void missingWrongRevokedAndRotatedKeysOnEveryEndpoint() throws Exception {
        JsonNode first = admin("create_query_key", Map.of("app", "keyed"));
        String key1 = first.path("key").asString();
        assertThat(key1).startsWith("sgk_" + first.path("key_id").asString() + "_");
        assertPasses("keyed", "km", "Bearer " + key1);
        for (String bad : new String[] {null, "Bearer", "Basic " + key1, "Bearer nope", "Bearer " + key1 + "x",
                "Bearer " + key1.substring(0, key1.length() - 1) + (key1.endsWith("A") ? "B" : "A")}) {
            assertRefused("keyed", "km", bad);
        }
        // rotation: a second key, then the first revoked
        JsonNode second = admin("create_query_key", Map.of("app", "keyed"));
        String key2 = second.path("key").asString();
        assertPasses("keyed", "km", "Bearer " + key2);
        assertPasses("keyed", "km", "Bearer " + key1);
        JsonNode revoked = admin("revoke_query_key", Map.of("app", "keyed", "key_id", first.path("key_id").asString()));
        assertThat(revoked.path("revoked").asBoolean()).isTrue();
        assertRefused("keyed", "km", "Bearer " + key1);
        assertPasses("keyed", "km", "Bearer " + key2);
        // a key of another app is no key here
        JsonNode other = admin("create_query_key", Map.of("app", "open"));
        assertRefused("keyed", "km", "Bearer " + other.path("key").asString());
        assertThat(post(adminServer.port(), "/admin/revoke_query_key", "{\"app\":\"open\",\"key_id\":\""
                + other.path("key_id").asString() + "\"}", null).statusCode()).isEqualTo(200);
        // the app without keys is open, with or without a header
        assertPasses("open", "om", null);
        assertPasses("open", "om", "Bearer whatever");
        // keys are not readable back
        String listed = post(adminServer.port(), "/admin/get_query_keys", "{\"app\":\"keyed\"}", null).body();
        assertThat(listed).contains(second.path("key_id").asString()).doesNotContain(key2)
                .doesNotContain(secretOf(key2)).doesNotContain("digest");
        assertThat(post(adminServer.port(), "/admin/get_application", "{\"name\":\"keyed\"}", null).body())
                .doesNotContain(key2);
        assertStoreHoldsNo(key2);
    }

    @Test
    void adminCallsRefuseBadRequests() throws Exception {
        assertThat(post(adminServer.port(), "/admin/create_query_key", "{\"app\":\"nope\"}", null).statusCode())
                .isEqualTo(404);
        assertThat(post(adminServer.port(), "/admin/revoke_query_key", "{\"app\":\"keyed\",\"key_id\":\"0\"}", null)
                .statusCode()).isEqualTo(404);
        HttpResponse<String> bad = post(adminServer.port(), "/admin/create_query_key",
                "{\"app\":\"open\",\"rate_limit\":{\"per_second\":0,\"burst\":1}}", null);
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("per_second");
        assertThat(post(adminServer.port(), "/admin/add_app", "{\"name\":\"q\",\"input_type\":\"floats\","
                + "\"default_output\":\"-1\",\"latency_slo_micros\":1000,\"rate_limit\":{\"per_second\":5}}", null)
                .statusCode()).isEqualTo(400);
    }

    /** Checks the store's own contents for the key (Redis); nothing to check in memory. */
    abstract void assertStoreHoldsNo(String key) throws Exception;

    /** The secret part of a key {@code sgk_<16 hex>_<43 base64url>}, whose base64url may itself hold '_'. */
    static String secretOf(String key) {
        assertThat(key).matches("sgk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}");
        return key.substring("sgk_".length() + 16 + 1);
    }

    void assertPasses(String app, String model, String authorization) throws Exception {
        for (HttpResponse<String> r : rest(app, model, authorization)) {
            assertThat(r.statusCode()).as("%s %s", r.uri(), authorization).isNotEqualTo(401);
        }
        for (Status.Code code : grpc(model, authorization)) {
            assertThat(code).as("gRPC %s", authorization).isNotEqualTo(Status.Code.UNAUTHENTICATED);
        }
    }

    void assertRefused(String app, String model, String authorization) throws Exception {
        for (HttpResponse<String> r : rest(app, model, authorization)) {
            assertThat(r.statusCode()).as("%s %s", r.uri(), authorization).isEqualTo(401);
            assertThat(r.headers().firstValue("WWW-Authenticate")).hasValueSatisfying(v -> assertThat(v)
                    .startsWith("Bearer"));
            assertThat(r.body()).contains("unauthorized").doesNotContain(app).doesNotContain(model);
        }
        for (Status.Code code : grpc(model, authorization)) {
            assertThat(code).as("gRPC %s", authorization).isEqualTo(Status.Code.UNAUTHENTICATED);
        }
    }

    private List<HttpResponse<String>> rest(String app, String model, String authorization) throws Exception {
        String infer = "{\"inputs\":[{\"name\":\"input\",\"datatype\":\"FP32\",\"shape\":[1,2],\"data\":[1,2]}]}";
        List<HttpResponse<String>> out = new ArrayList<>();
        out.add(post(queryPort, "/" + app + "/predict", "{\"input\":[1,2]}", authorization));
        out.add(post(queryPort, "/" + app + "/update", "{\"input\":[1,2],\"label\":1}", authorization));
        out.add(post(queryPort, "/v2/models/" + model + "/infer", infer, authorization));
        out.add(post(queryPort, "/v2/models/" + model + "/versions/1/infer", infer, authorization));
        out.add(get(queryPort, "/v2/models/" + model, authorization));
        out.add(get(queryPort, "/v2/models/" + model + "/ready", authorization));
        return out;
    }

    private List<Status.Code> grpc(String model, String authorization) {
        Metadata headers = new Metadata();
        if (authorization != null) {
            headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), authorization);
        }
        GRPCInferenceServiceGrpc.GRPCInferenceServiceBlockingStub stub = GRPCInferenceServiceGrpc
                .newBlockingStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
                .withDeadlineAfter(10, TimeUnit.SECONDS);
        List<Status.Code> codes = new ArrayList<>();
        codes.add(code(() -> stub.modelInfer(ModelInferRequest.newBuilder().setModelName(model)
                .addInputs(ModelInferRequest.InferInputTensor.newBuilder().setName("input").setDatatype("FP32")
                        .addShape(1).addShape(2).setContents(InferTensorContents.newBuilder()
                                .addFp32Contents(1).addFp32Contents(2))).build())));
        codes.add(code(() -> stub.modelMetadata(ModelMetadataRequest.newBuilder().setName(model).build())));
        codes.add(code(() -> stub.modelReady(ModelReadyRequest.newBuilder().setName(model).build())));
        return codes;
    }

    private static Status.Code code(Runnable call) {
        try {
            call.run();
            return Status.Code.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode();
        }
    }

    JsonNode admin(String call, Object body) throws Exception {
        HttpResponse<String> r = post(adminServer.port(), "/admin/" + call, JSON.writeValueAsString(body), null);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    HttpResponse<String> post(int port, String path, String body, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(int port, String path, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).GET();
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}
