package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.GatewayApplication;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.fleet.FleetMember;
import io.servegate.gateway.fleet.FleetNode;
import io.servegate.gateway.fleet.FleetState;
import io.servegate.gateway.testsupport.OtlpReceiver;
import io.servegate.gateway.testsupport.OtlpReceiver.Received;
import io.servegate.gateway.testsupport.RedisServer;
import io.servegate.oip.client.TensorType;
import io.servegate.sdk.ModelContainer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Two full gateways in a fleet (one real {@code redis-server}), tracing on, both exporting to one
 * OTLP receiver: a query with a client's {@code traceparent} sent to the gateway that does not own
 * its model is forwarded, and both gateways' spans are in the client's trace, the owner's under
 * the sender's {@code forward} span. (FleetTracingTest checks the hop's propagation on the fleet
 * classes alone; this checks it through the whole gateways, as configured by their properties.)
 */
class FleetTracingEndToEndTest {

    private static final String REQUEST = "POST /{app}/predict";
    private static final String PREDICT = "predict m:1";

    @Test
    void aForwardedQuerysSpansOnBothGatewaysShareTheClientsTrace() throws Exception {
        List<ConfigurableApplicationContext> gateways = new ArrayList<>();
        try (OtlpReceiver receiver = OtlpReceiver.start();
                RedisServer redis = RedisServer.start();
                ModelContainer<float[], String> container = ModelContainer.builder(TensorType.FLOATS,
                        TensorType.STRINGS, (List<float[]> batch) -> batch.stream().map(x -> "y" + x[0]).toList())
                        .name("m").version("1").host("127.0.0.1").port(0).inputLength(2).build().start()) {
            try {
                forwardAndCheck(gateways, receiver, redis, container);
            } finally {
                // the gateways first: they hold connections to Redis and to the container
                gateways.forEach(ConfigurableApplicationContext::close);
            }
        }
    }

    private static void forwardAndCheck(List<ConfigurableApplicationContext> gateways, OtlpReceiver receiver,
            RedisServer redis, ModelContainer<float[], String> container) throws Exception {
        for (int g = 0; g < 2; g++) {
            gateways.add(new SpringApplicationBuilder(GatewayApplication.class).run(
                    "--server.port=0",
                    "--servegate.admin.port=0",
                    "--servegate.oip.grpc-port=0",
                    "--servegate.registry.store=redis",
                    "--servegate.registry.redis-uri=" + redis.uri(),
                    "--servegate.registry.key-prefix=sg-fleet-tracing",
                    "--servegate.fleet.port=0",
                    "--servegate.fleet.advertise-host=127.0.0.1",
                    "--servegate.fleet.name=gw" + g,
                    "--servegate.fleet.secret=fleet-tracing-secret",
                    "--servegate.fleet.heartbeat=100ms",
                    "--servegate.fleet.lease=600ms",
                    "--servegate.tracing.enabled=true",
                    "--servegate.tracing.endpoint=" + receiver.endpoint(),
                    "--servegate.tracing.service-name=gw" + g,
                    "--spring.main.banner-mode=off",
                    "--logging.level.root=WARN"));
        }
        List<WebClient> query = gateways.stream().map(gw -> WebClient.create("http://127.0.0.1:"
                + ((WebServerApplicationContext) gw).getWebServer().getPort())).toList();
        WebClient admin = WebClient.create("http://127.0.0.1:" + gateways.get(0).getBean(AdminServer.class).port());
        post(admin, "/admin/add_model", "{\"model_name\": \"m\", \"model_version\": \"1\", \"input_type\": \"floats\"}");
        post(admin, "/admin/add_container", "{\"model_name\": \"m\", \"model_version\": \"1\", \"address\": "
                + "\"127.0.0.1:" + container.port() + "\"}");
        post(admin, "/admin/add_app", "{\"name\": \"app\", \"input_type\": \"floats\", \"default_output\": "
                + "\"none\", \"latency_slo_micros\": 1000000}");
        post(admin, "/admin/add_model_links", "{\"app_name\": \"app\", \"model_names\": [\"m\"]}");
        await("the version owned, both gateways agree and answer", () -> {
            FleetState s = member(gateways, 0).state();
            return s != null && s.owners().size() == 1 && s.members().size() == 2
                    && member(gateways, 1).state() != null && member(gateways, 1).state().owners().equals(s.owners())
                    && owner(gateways) >= 0 && answered(query.get(0)) && answered(query.get(1));
        });
        int owner = owner(gateways);
        int sender = 1 - owner;

        String traceId = hex(16);
        String clientSpan = hex(8);
        String answer = query.get(sender).post().uri("/app/predict").contentType(MediaType.APPLICATION_JSON)
                .header("traceparent", "00-" + traceId + "-" + clientSpan + "-01")
                .bodyValue("{\"input\": [4.0, 1.0]}").retrieve().bodyToMono(String.class)
                .block(Duration.ofSeconds(10));
        assertThat(answer).contains("\"output\":\"y4.0\"").contains("\"default\":false");

        String senderName = "gw" + sender;
        String ownerName = "gw" + owner;
        List<Received> trace = receiver.await(traceId, spans -> has(spans, ownerName, PREDICT)
                && has(spans, senderName, "forward") && has(spans, ownerName, "servegate.fleet.Forward/Predict")
                && has(spans, senderName, REQUEST), Duration.ofSeconds(20));
        Received request = one(trace, senderName, REQUEST);
        Received forward = one(trace, senderName, "forward");
        Received served = one(trace, ownerName, "servegate.fleet.Forward/Predict");
        Received owned = one(trace, ownerName, PREDICT);
        assertThat(request.parentId()).as("the sender continues the client's span").isEqualTo(clientSpan);
        assertThat(forward.attribute("servegate.fleet.member")).startsWith(ownerName + "-");
        assertThat(served.parentId()).as("the owner continues the sender's forward span")
                .isEqualTo(forward.spanId());
        assertThat(owned.parentId()).isEqualTo(served.spanId());
        assertThat(owned.attribute("servegate.outcome")).isEqualTo("answered");
    }

    private static FleetMember member(List<ConfigurableApplicationContext> gateways, int g) {
        return gateways.get(g).getBean(FleetNode.class).member();
    }

    /** The gateway whose member owns m:1, or -1. */
    private static int owner(List<ConfigurableApplicationContext> gateways) {
        for (int g = 0; g < gateways.size(); g++) {
            if (member(gateways, g).owned().contains("m:1")) {
                return g;
            }
        }
        return -1;
    }

    private static boolean answered(WebClient query) {
        String r = query.post().uri("/app/predict").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"input\": [1.0, 2.0]}").retrieve().bodyToMono(String.class)
                .onErrorResume(e -> reactor.core.publisher.Mono.empty()).block(Duration.ofSeconds(10));
        return r != null && r.contains("\"default\":false");
    }

    private static void post(WebClient admin, String uri, String body) {
        String reply = admin.post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(body).retrieve()
                .bodyToMono(String.class).block(Duration.ofSeconds(10));
        assertThat(reply).as(uri).isNotNull();
    }

    private static boolean has(List<Received> spans, String service, String name) {
        return spans.stream().anyMatch(s -> s.service().equals(service) && s.name().equals(name));
    }

    private static Received one(List<Received> spans, String service, String name) {
        List<Received> named = spans.stream().filter(s -> s.service().equals(service) && s.name().equals(name))
                .toList();
        assertThat(named).as(service + " " + name + " in "
                + spans.stream().map(s -> s.service() + " " + s.name()).toList()).hasSize(1);
        return named.get(0);
    }

    private static void await(String what, Callable<Boolean> condition) throws Exception {
        long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!condition.call()) {
            assertThat(System.nanoTime()).as(what).isLessThan(until);
            Thread.sleep(50);
        }
    }

    private static String hex(int bytes) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < bytes; i++) {
            sb.append(String.format("%02x", ThreadLocalRandom.current().nextInt(1, 256)));
        }
        return sb.toString();
    }
}
