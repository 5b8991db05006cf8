package io.servegate.gateway.warmup;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.GatewayApplication;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.fleet.FleetNode;
import io.servegate.gateway.fleet.FleetState;
import io.servegate.gateway.testsupport.FreePort;
import io.servegate.gateway.testsupport.RedisServer;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ServerReadyRequest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * A gateway reports ready (REST and gRPC) only after its warm-up, while it answers live all along;
 * in a fleet on a real {@code redis-server} it joins, and so is granted versions, only once warm;
 * and its warm-up there exercises the hop between gateways on its own fleet port, out of sight of its
 * real pool and metrics; its shutdown reports not ready and hands its versions to the others while it still answers.
 */
class WarmupReadinessTest {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @Test
    void readyOnlyAfterTheWarmupLiveAllAlong() throws Exception {
        int grpc = FreePort.pick();
        try (ConfigurableApplicationContext gw = new SpringApplicationBuilder(GatewayApplication.class).run(
                "--server.port=0", "--servegate.admin.port=0", "--servegate.oip.grpc-port=" + grpc,
                "--servegate.warmup.enabled=true", "--servegate.warmup.min-rounds=10",
                "--servegate.warmup.calls-per-round=8", "--servegate.warmup.max-duration=20s", "--spring.main.banner-mode=off", "--logging.level.root=WARN")) {
            int port = port(gw);
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", grpc).usePlaintext().build();
            try {
                HttpResponse<String> early = get(port, "/v2/health/ready");
                assertThat(early.statusCode()).isEqualTo(503);
                assertThat(early.body()).contains("\"reason\":\"warming up\"");
                assertThat(serverReady(channel)).isFalse();
                assertThat(get(port, "/v2/health/live").statusCode()).isEqualTo(200);

                await(() -> gw.getBean(ReadinessGate.class).ready(), Duration.ofSeconds(60), "warmed up");
                assertThat(get(port, "/v2/health/ready").statusCode()).isEqualTo(200);
                assertThat(serverReady(channel)).isTrue();
                MeterRegistry meters = gw.getBean(MeterRegistry.class);
                // steady after 10 rounds or stopped at 20 s (a loaded machine): rounds were made either way
                assertThat(meters.get("servegate.warmup.rounds").gauge().value()).as("rounds made")
                        .isGreaterThanOrEqualTo(1);
                assertThat(meters.get("servegate.warmup.duration").timeGauge().value(TimeUnit.SECONDS))
                        .as("warm-up seconds").isPositive();
                assertThat(meters.get("servegate.ready").gauge().value()).isEqualTo(1.0);
            } finally {
                channel.shutdownNow().awaitTermination(1, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void aFleetMemberJoinsOnceWarmAndHandsItsVersionsOffBeforeItStopsAnswering() throws Exception {
        List<ConfigurableApplicationContext> gateways = new ArrayList<>();
        try (RedisServer redis = RedisServer.start()) {
            try {
                ConfigurableApplicationContext first = gateway(redis, "w0", "--servegate.warmup.enabled=false");
                gateways.add(first);
                WebClient admin = WebClient.create("http://127.0.0.1:" + first.getBean(AdminServer.class).port());
                for (int v = 1; v <= 4; v++) {
                    admin.post().uri("/admin/add_model").contentType(MediaType.APPLICATION_JSON)
                            .bodyValue("{\"model_name\":\"wm\",\"model_version\":\"" + v
                                    + "\",\"input_type\":\"floats\"}")
                            .retrieve().bodyToMono(String.class).block(Duration.ofSeconds(10));
                }
                FleetNode firstNode = first.getBean(FleetNode.class);
                await(() -> firstNode.member().owned().size() == 4, Duration.ofSeconds(20), "first owns all");

                ConfigurableApplicationContext second = gateway(redis, "w1", "--servegate.warmup.enabled=true",
                        "--servegate.warmup.min-rounds=30", "--servegate.warmup.max-duration=20s");
                gateways.add(second);
                ReadinessGate gate = second.getBean(ReadinessGate.class);
                FleetNode secondNode = second.getBean(FleetNode.class);
                // while it warms up it is no member: nothing can be granted or handed to it
                while (!gate.ready()) {
                    FleetState seen = firstNode.member().state();
                    assertThat(seen.members()).as("members while the second warms up").hasSize(1);
                    assertThat(secondNode.member().owned()).isEmpty();
                    Thread.sleep(20);
                }
                warmedUpOverTheHop(second.getBean(MeterRegistry.class));
                await(() -> firstNode.member().state().members().size() == 2, Duration.ofSeconds(20), "joined");
                await(() -> !secondNode.member().owned().isEmpty(), Duration.ofSeconds(30),
                        "the warm member is given load");

                // the first step of its shutdown: not ready, out of the fleet, still answering
                second.getBean(Departure.class).stop();
                int port = port(second);
                HttpResponse<String> ready = get(port, "/v2/health/ready");
                assertThat(ready.statusCode()).isEqualTo(503);
                assertThat(ready.body()).contains("shutting down");
                assertThat(get(port, "/v2/health/live").statusCode()).isEqualTo(200);
                await(() -> firstNode.member().owned().size() == 4, Duration.ofSeconds(20),
                        "the first owns every version again while the second still answers");
                assertThat(get(port, "/v2/health/live").statusCode()).isEqualTo(200);
            } finally {
                gateways.forEach(ConfigurableApplicationContext::close);
            }
        }
    }

    /**
     * A fleet member's warm-up forwarded queries to its own fleet port, with the secret, and had them
     * answered by its private pool there, while nothing was scheduled on its real pool and no meter of
     * the gateway's (forwarding, scheduling, batching) saw them.
     */
    private static void warmedUpOverTheHop(MeterRegistry meters) {
        assertThat(meters.get("servegate.warmup.forwards").gauge().value()).as("forwards answered over the hop")
                .isPositive();
        assertThat(meters.get("servegate.fleet.hop.refused").counter().count()).as("refused at the fleet port")
                .isZero();
        assertThat(meters.find("servegate.fleet.forward.queries").summaries()).allSatisfy(s ->
                assertThat(s.count()).as("the gateway's own forwards").isZero());
        assertThat(meters.find("servegate.fleet.forwarded").counters()).allSatisfy(c ->
                assertThat(c.count()).as("the gateway's own forwards").isZero());
        assertThat(meters.find("servegate.scheduler.arrivals").functionCounters()).allSatisfy(c ->
                assertThat(c.count()).as("queries scheduled on the real pool").isZero());
        assertThat(meters.find("servegate.batch.size").summaries()).allSatisfy(s ->
                assertThat(s.count()).as("batches sent to real replicas").isZero());
        assertThat(meters.getMeters()).noneMatch(m -> m.getId().getTags().stream()
                .anyMatch(t -> t.getValue().contains("warm-up")));
    }

    private static ConfigurableApplicationContext gateway(RedisServer redis, String name, String... more) {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--servegate.admin.port=0",
                "--servegate.registry.store=redis", "--servegate.registry.redis-uri=" + redis.uri(),
                "--servegate.registry.key-prefix=sg-warm", "--servegate.fleet.port=0",
                "--servegate.fleet.advertise-host=127.0.0.1", "--servegate.fleet.name=" + name,
                "--servegate.fleet.secret=warm-test", "--servegate.fleet.heartbeat=100ms",
                "--servegate.fleet.lease=600ms", "--spring.main.banner-mode=off", "--logging.level.root=WARN"));
        args.addAll(List.of(more));
        return new SpringApplicationBuilder(GatewayApplication.class).run(args.toArray(String[]::new));
    }

    private static int port(ConfigurableApplicationContext gw) {
        return ((WebServerApplicationContext) gw).getWebServer().getPort();
    }

    private static boolean serverReady(ManagedChannel channel) {
        return GRPCInferenceServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                .serverReady(ServerReadyRequest.getDefaultInstance()).getReady();
    }

    private static HttpResponse<String> get(int port, String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void await(BooleanSupplier condition, Duration limit, String what) throws InterruptedException {
        long until = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(until);
            Thread.sleep(20);
        }
    }
}
