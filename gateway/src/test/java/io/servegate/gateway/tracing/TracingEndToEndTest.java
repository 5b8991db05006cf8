package io.servegate.gateway.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Metadata;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.exporter.otlp.trace.OtlpGrpcSpanExporter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.servegate.gateway.GatewayApplication;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.dispatch.ReplicaPool;
import io.servegate.gateway.testsupport.FreePort;
import io.servegate.gateway.testsupport.OtlpReceiver;
import io.servegate.gateway.testsupport.OtlpReceiver.Received;
import io.servegate.oip.client.ContainerClient;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.ObjectMapper;

/**
 * A gateway with {@code servegate.tracing.enabled} exports to a real OTLP receiver on loopback
 * gRPC, in front of an in-process Java SDK container whose own OpenTelemetry SDK exports to the
 * same receiver: a query's trace continues the client's {@code traceparent} (HTTP and gRPC) and
 * holds the request, parse, prediction, queue, batch and ModelInfer spans, with the container's
 * span under the gateway's call; a batch links to each of its queries; a failed query says why.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TracingEndToEndTest {

    private static final Duration EXPORTED = Duration.ofSeconds(20);
    private static final String REQUEST = "POST /{app}/predict";
    private static final String CALL = "inference.GRPCInferenceService/ModelInfer";
    /** An input whose first element is this makes the container wait, holding its replica busy. */
    private static final float SLOW = 7f;

    private OtlpReceiver receiver;
    private OpenTelemetrySdk containerOtel;
    private ModelContainer<float[], String> container;
    private ConfigurableApplicationContext gateway;
    private WebClient query;
    private final int grpcPort = FreePort.pick();

    @BeforeAll
    void start() throws Exception {
        receiver = OtlpReceiver.start();
        // the container's own SDK, as a container author registers one
        containerOtel = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder()
                        .setResource(Resource.getDefault().merge(Resource.create(
                                io.opentelemetry.api.common.Attributes.of(AttributeKey.stringKey("service.name"),
                                        "test-container"))))
                        .addSpanProcessor(SimpleSpanProcessor.create(OtlpGrpcSpanExporter.builder()
                                .setEndpoint(receiver.endpoint()).build()))
                        .build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
        GlobalOpenTelemetry.resetForTest();
        GlobalOpenTelemetry.set(containerOtel);
        container = ModelContainer.builder(TensorType.FLOATS, TensorType.STRINGS, (List<float[]> batch) -> {
            if (batch.stream().anyMatch(x -> x[0] == SLOW)) {
                Thread.sleep(400);
            }
            if (batch.stream().anyMatch(x -> x[0] < 0)) {
                return List.of(); // a broken predictor: the container fails the call, not a row
            }
            return batch.stream().map(x -> "out" + (x[0] + x[1])).toList();
        }).name("m").version("1").host("127.0.0.1").port(0).inputLength(2).build().start();
        gateway = new SpringApplicationBuilder(GatewayApplication.class).run(
                "--server.port=0",
                "--servegate.admin.port=0",
                "--servegate.oip.grpc-port=" + grpcPort,
                "--servegate.tracing.enabled=true",
                "--servegate.tracing.endpoint=" + receiver.endpoint(),
                "--servegate.tracing.service-name=test-gateway",
                "--spring.main.banner-mode=off",
                "--logging.level.root=WARN");
        query = WebClient.create("http://127.0.0.1:" + ((WebServerApplicationContext) gateway).getWebServer()
                .getPort());
        WebClient admin = WebClient.create("http://127.0.0.1:" + gateway.getBean(AdminServer.class).port());
        ObjectMapper json = gateway.getBean(ObjectMapper.class);
        post(admin, json, "/admin/add_model", Map.of("model_name", "m", "model_version", "1", "input_type", "floats"));
        post(admin, json, "/admin/add_container", Map.of("model_name", "m", "model_version", "1",
                "address", "127.0.0.1:" + container.port()));
        Map<String, Object> app = new LinkedHashMap<>();
        app.put("name", "app");
        app.put("input_type", "floats");
        app.put("default_output", "none");
        app.put("latency_slo_micros", 3_000_000);
        post(admin, json, "/admin/add_app", app);
        post(admin, json, "/admin/add_model_links", Map.of("app_name", "app", "model_names", List.of("m")));
        ReplicaPool pool = gateway.getBean(ReplicaPool.class);
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!pool.ready("m", "1")) {
            assertThat(System.nanoTime()).as("the replica is ready").isLessThan(until);
            Thread.sleep(50);
        }
    }

    @AfterAll
    void stop() {
        if (gateway != null) {
            gateway.close();
        }
        if (container != null) {
            container.close();
        }
        if (containerOtel != null) {
            containerOtel.close();
        }
        GlobalOpenTelemetry.resetForTest();
        if (receiver != null) {
            receiver.close();
        }
    }

    @Test
    void aQueryWithATraceparentGetsTheSpanTreeUnderItsTraceDownToTheContainer() throws Exception {
        String traceId = hex(16);
        String clientSpan = hex(8);
        String answer = predict("00-" + traceId + "-" + clientSpan + "-01", "[1.0, 2.0]");
        assertThat(answer).contains("out3.0");

        List<Received> trace = receiver.await(traceId, spans -> has(spans, REQUEST) && has(spans, "queue")
                && spans.stream().anyMatch(s -> s.service().equals("test-container")), EXPORTED);
        Received request = one(trace, REQUEST);
        Received parse = one(trace, "parse");
        Received predict = one(trace, "predict m:1");
        Received queue = one(trace, "queue");
        Received batch = one(trace, "batch m:1");
        Received call = trace.stream().filter(s -> s.name().equals(CALL) && s.service().equals("test-gateway"))
                .findFirst().orElseThrow();
        Received inContainer = trace.stream().filter(s -> s.service().equals("test-container")).findFirst()
                .orElseThrow();

        assertThat(request.service()).isEqualTo("test-gateway");
        assertThat(request.parentId()).as("continues the client's span").isEqualTo(clientSpan);
        assertThat(request.attribute("http.response.status_code")).isEqualTo("200");
        assertThat(parse.parentId()).isEqualTo(request.spanId());
        assertThat(predict.parentId()).isEqualTo(request.spanId());
        assertThat(predict.attribute("servegate.cache")).isEqualTo("miss");
        assertThat(predict.attribute("servegate.outcome")).isEqualTo("answered");
        assertThat(queue.parentId()).isEqualTo(predict.spanId());
        assertThat(queue.attribute("servegate.batch.size")).isEqualTo("1");
        assertThat(queue.attribute("servegate.replica")).isNotBlank();
        assertThat(queue.attribute("servegate.policy")).isNotBlank();
        assertThat(queue.linkedSpanIds()).containsExactly(batch.spanId());
        assertThat(batch.parentId()).isEqualTo(predict.spanId());
        assertThat(batch.linkedSpanIds()).containsExactly(predict.spanId());
        assertThat(call.parentId()).isEqualTo(batch.spanId());
        assertThat(inContainer.name()).isEqualTo(CALL);
        assertThat(inContainer.parentId()).as("the container continues the gateway's call").isEqualTo(call.spanId());

        // the latency histogram's exemplars are trace ids of traced queries (OpenMetrics shows them)
        String metrics = query.get().uri("/metrics").header("Accept", "application/openmetrics-text; version=1.0.0")
                .retrieve().bodyToMono(String.class).block(Duration.ofSeconds(10));
        java.util.regex.Matcher exemplar = java.util.regex.Pattern
                .compile("servegate_request_latency_seconds_bucket\\{[^}]*app=\"app\"[^}]*} \\S+ # \\{[^}]*trace_id=\"([0-9a-f]{32})\"")
                .matcher(metrics);
        assertThat(exemplar.find()).as("an exemplar on the latency histogram").isTrue();
        String exemplarTrace = exemplar.group(1);
        assertThat(receiver.await(exemplarTrace, spans -> has(spans, REQUEST), EXPORTED))
                .anyMatch(r -> r.name().equals(REQUEST));

        // the same input again: the cache answers, nothing is queued
        String again = hex(16);
        predict("00-" + again + "-" + hex(8) + "-01", "[1.0, 2.0]");
        List<Received> hit = receiver.await(again, spans -> has(spans, REQUEST) && has(spans, "predict m:1"),
                EXPORTED);
        assertThat(one(hit, "predict m:1").attribute("servegate.cache")).isEqualTo("hit");
        assertThat(hit).noneMatch(s -> s.name().equals("queue") || s.name().startsWith("batch"));
    }

    @Test
    void aBatchLinksToEveryQueryItServesAndEachQueryLinksBack() throws Exception {
        // the first query holds the replica; the next ones wait together and leave in one batch
        String first = hex(16);
        Mono<String> busy = predictLater("00-" + first + "-" + hex(8) + "-01", "[" + SLOW + ", 0.5]");
        List<String> traces = new ArrayList<>();
        List<Mono<String>> queued = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String t = hex(16);
            traces.add(t);
            queued.add(predictLater("00-" + t + "-" + hex(8) + "-01", "[" + (100 + i) + ", 0.25]")
                    .delaySubscription(Duration.ofMillis(150)));
        }
        List<String> answers = Flux.merge(busy, Flux.merge(queued)).collectList().block(Duration.ofSeconds(20));
        assertThat(answers).hasSize(4);

        List<Received> batches = new ArrayList<>();
        List<Received> predicts = new ArrayList<>();
        for (String t : traces) {
            List<Received> trace = receiver.await(t, spans -> has(spans, "queue") && has(spans, "predict m:1"),
                    EXPORTED);
            Received predict = one(trace, "predict m:1");
            Received queue = one(trace, "queue");
            predicts.add(predict);
            assertThat(queue.linkedSpanIds()).hasSize(1);
            assertThat(predict.linkedSpanIds()).containsAll(queue.linkedSpanIds());
            receiver.spans().stream().filter(s -> s.spanId().equals(queue.linkedSpanIds().get(0)))
                    .findFirst().ifPresent(batches::add);
        }
        Received shared = batches.stream().filter(b -> Long.parseLong(b.attribute("servegate.batch.size")) > 1)
                .findFirst().orElseThrow(() -> new AssertionError("no batch of more than one query: " + batches));
        // it lives in one query's trace and links to the prediction of every query it served
        assertThat(shared.linkedSpanIds()).hasSize(Integer.parseInt(shared.attribute("servegate.batch.size")));
        assertThat(shared.attribute("servegate.batch.traced")).isEqualTo(shared.attribute("servegate.batch.size"));
        for (Received p : predicts) {
            if (p.linkedSpanIds().contains(shared.spanId())) {
                assertThat(shared.linkedSpanIds()).contains(p.spanId());
            }
        }
        assertThat(predicts.stream().filter(p -> p.linkedSpanIds().contains(shared.spanId())).count())
                .isEqualTo(shared.linkedSpanIds().size());
    }

    @Test
    void aFailedQuerySaysWhyOnItsSpans() throws Exception {
        // the container fails the query: the default answers it, and the trace says why
        String failing = hex(16);
        String answer = predict("00-" + failing + "-" + hex(8) + "-01", "[-1.0, 2.0]");
        assertThat(answer).contains("\"default\":true");
        List<Received> trace = receiver.await(failing, spans -> has(spans, REQUEST) && has(spans, "batch m:1"),
                EXPORTED);
        Received predict = one(trace, "predict m:1");
        assertThat(predict.failed()).isTrue();
        assertThat(predict.attribute("servegate.default.reason")).isEqualTo("CONTAINER_ERROR");
        assertThat(predict.statusMessage()).contains("CONTAINER_ERROR").contains("predictor of model 'm'");
        Received request = one(trace, REQUEST);
        assertThat(request.span().getEventsList()).anySatisfy(e -> {
            assertThat(e.getName()).isEqualTo("default");
            assertThat(e.getAttributesList()).anyMatch(kv -> kv.getValue().getStringValue().equals("CONTAINER_ERROR"));
        });
        assertThat(trace).filteredOn(s -> s.name().equals(CALL) && s.service().equals("test-gateway"))
                .allMatch(Received::failed).isNotEmpty();

        // bad input never reaches a model: the request's span carries the 400 and its reason
        String bad = hex(16);
        String refused = query.post().uri("/app/predict").contentType(MediaType.APPLICATION_JSON)
                .header("traceparent", "00-" + bad + "-" + hex(8) + "-01").bodyValue("{\"input\": [1.0, \"x\"]}")
                .exchangeToMono(r -> r.bodyToMono(String.class)).block(Duration.ofSeconds(10));
        assertThat(refused).contains("error");
        Received badRequest = one(receiver.await(bad, spans -> has(spans, REQUEST), EXPORTED), REQUEST);
        assertThat(badRequest.attribute("http.response.status_code")).isEqualTo("400");
        assertThat(badRequest.failed()).isTrue();
        assertThat(badRequest.statusMessage()).isNotBlank();
    }

    @Test
    void anOipGrpcCallContinuesItsCallersTrace() throws Exception {
        String traceId = hex(16);
        String clientSpan = hex(8);
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER),
                "00-" + traceId + "-" + clientSpan + "-01");
        try (ContainerClient client = ContainerClient.connect("127.0.0.1:" + grpcPort)) {
            assertThat(client.inferAsText("m", "1", TensorType.FLOATS, List.of(new float[] {40f, 2f}),
                    Duration.ofSeconds(10), headers).get().outputs()).containsExactly("out42.0");
        }
        List<Received> trace = receiver.await(traceId, spans -> has(spans, "batch m:1") && spans.stream()
                .anyMatch(s -> s.name().equals(CALL) && s.parentId().equals(clientSpan)), EXPORTED);
        Received server = trace.stream().filter(s -> s.name().equals(CALL) && s.parentId().equals(clientSpan))
                .findFirst().orElseThrow();
        assertThat(server.service()).isEqualTo("test-gateway");
        assertThat(server.attribute("rpc.grpc.status_code")).isEqualTo("0");
        assertThat(one(trace, "predict m:1").parentId()).isEqualTo(server.spanId());
    }

    private String predict(String traceparent, String input) {
        return predictLater(traceparent, input).block(Duration.ofSeconds(20));
    }

    private Mono<String> predictLater(String traceparent, String input) {
        return query.post().uri("/app/predict").contentType(MediaType.APPLICATION_JSON)
                .header("traceparent", traceparent).bodyValue("{\"input\": " + input + "}")
                .retrieve().bodyToMono(String.class);
    }

    private static boolean has(List<Received> spans, String name) {
        return spans.stream().anyMatch(s -> s.name().equals(name));
    }

    private static Received one(List<Received> spans, String name) {
        List<Received> named = spans.stream().filter(s -> s.name().equals(name)).toList();
        assertThat(named).as(name + " in " + spans.stream().map(Received::name).toList()).hasSize(1);
        return named.get(0);
    }

    private static String hex(int bytes) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < bytes; i++) {
            sb.append(String.format("%02x", ThreadLocalRandom.current().nextInt(1, 256)));
        }
        return sb.toString();
    }

    private static void post(WebClient admin, ObjectMapper json, String uri, Object body) {
        String reply = admin.post().uri(uri).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(json.writeValueAsString(body)).retrieve().bodyToMono(String.class)
                .block(Duration.ofSeconds(10));
        assertThat(reply).as(uri).isNotNull();
    }
}
