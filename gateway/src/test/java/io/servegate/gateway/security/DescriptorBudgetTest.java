package io.servegate.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.fleet.FleetNode;
import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.FreePort;
import io.servegate.gateway.testsupport.GatewayCalls;
import io.servegate.gateway.testsupport.LoopbackClients;
import io.servegate.gateway.testsupport.RedisServer;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ServerLiveRequest;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.ObjectMapper;

/**
 * Every port (query, admin, OIP gRPC, fleet) flooded at once with idle and half-open connections,
 * more than the connection budget all ports share, from two client addresses (127.0.0.3 and
 * 127.0.0.4; Linux routes all of 127/8 to lo): each flooder gets its share of each port and no
 * more, so the budget is not spent; real queries keep being answered during the flood, a new
 * client from another address (127.0.0.2) still connects, the refused connections are counted
 * as {@code per-client-limit}, and nothing logs {@code Too many open files}. Timeouts are long
 * here, so only the shares and the budget close anything.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0",
    "servegate.registry.store=redis",
    "servegate.fleet.secret=descriptor-budget-secret",
    "servegate.fleet.advertise-host=127.0.0.1",
    "servegate.connections.max-total-connections=" + DescriptorBudgetTest.BUDGET,
    "servegate.connections.max-connections-per-client=" + DescriptorBudgetTest.SHARE,
    "servegate.connections.http.header-timeout=60s",
    "servegate.connections.http.idle-timeout=60s",
    "servegate.connections.grpc.handshake-timeout=60s"})
@DirtiesContext
class DescriptorBudgetTest {

    static final int BUDGET = 200;
    static final int SHARE = 20;
    /** Connections each flooder opens on each port: 2 × 4 × 30 = 240, over the budget. */
    private static final int EACH = 30;
    private static final List<String> FLOODERS = List.of("127.0.0.3", "127.0.0.4");
    private static final int GRPC_PORT = FreePort.pick();
    private static final int FLEET_PORT = FreePort.pick();
    private static RedisServer redis;

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    FleetNode fleet;

    @Autowired
    MeterRegistry meters;

    @Autowired
    ObjectMapper json;

    @DynamicPropertySource
    static void ports(DynamicPropertyRegistry properties) {
        redis = RedisServer.start();
        properties.add("servegate.registry.redis-uri", redis::uri);
        properties.add("servegate.oip.grpc-port", () -> GRPC_PORT);
        properties.add("servegate.fleet.port", () -> FLEET_PORT);
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    private record Port(String name, int number, String halfOpen) {
    }

    @Test
    void aFloodOfEveryPortLeavesRoomForQueriesAndNewClients() throws Exception {
        ListAppender<ILoggingEvent> log = new ListAppender<>();
        log.start();
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.addAppender(log);
        GatewayCalls calls = new GatewayCalls(queryPort, adminServer.port(), json);
        List<Port> ports = List.of(new Port("query", queryPort, "POST /app/predict HTTP/1.1\r\nHost: a\r\n"),
                new Port("admin", adminServer.port(), "POST /admin/add_app HTTP/1.1\r\nHost: a\r\n"),
                new Port("grpc", GRPC_PORT, "PRI * HTTP/2.0\r\n"), new Port("fleet", fleet.port(), "PRI * HTTP/2.0\r\n"));
        List<Socket> flood = new ArrayList<>();
        try (ContainerProcess container = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "emu",
                "--version", "1", "--beta-ms", "1", "--alpha-ms", "0.1")) {
            calls.admin("add_app", Map.of("name", "app", "input_type", "floats", "default_output", "none",
                    "latency_slo_micros", 2_000_000));
            calls.admin("add_model", Map.of("model_name", "emu", "model_version", "1", "input_type", "floats"));
            calls.admin("add_model_links", Map.of("app_name", "app", "model_names", List.of("emu")));
            calls.admin("add_container", Map.of("model_name", "emu", "model_version", "1", "address",
                    container.address()));
            calls.awaitAvailable();
            assertThat(calls.predict("app", new float[] {0}).get("default").booleanValue()).isFalse();

            for (String flooder : FLOODERS) {
                for (Port port : ports) {
                    for (int i = 0; i < EACH; i++) {
                        Socket s = LoopbackClients.connect(flooder, port.number());
                        flood.add(s);
                        if (i % 2 == 1) { // half-open: a request or preface begun, never finished
                            s.getOutputStream().write(port.halfOpen().getBytes(StandardCharsets.US_ASCII));
                        }
                    }
                }
            }
            for (Port port : ports) {
                awaitCount(port.name(), FLOODERS.size() * (EACH - SHARE));
            }

            for (int i = 1; i <= 20; i++) {
                assertThat(calls.predict("app", new float[] {i}).get("default").booleanValue())
                        .as("query %d during the flood", i).isFalse();
            }
            calls.admin("get_all_applications", Map.of());
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", GRPC_PORT).usePlaintext().build();
            try {
                assertThat(GRPCInferenceServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                        .serverLive(ServerLiveRequest.getDefaultInstance()).getLive()).isTrue();
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            assertThat(LoopbackClients.getFrom("127.0.0.2", queryPort, "/v2/health/live")).as("a new client on the query port")
                    .startsWith("HTTP/1.1 200");
            assertThat(LoopbackClients.getFrom("127.0.0.2", adminServer.port(), "/admin/ping")).as("a new client on the admin port")
                    .startsWith("HTTP/1.1 200");
            for (Port port : ports) {
                assertThat(dropped(port.name(), "budget")).as("%s: the budget was not spent", port.name()).isZero();
                assertThat(meters.get("servegate.connections.open").tags("port", port.name()).gauge().value())
                        .as("%s: open connections", port.name()).isLessThanOrEqualTo(BUDGET);
            }
        } finally {
            for (Socket s : flood) {
                s.close();
            }
            root.detachAppender(log);
        }
        assertThat(log.list).as("log").noneMatch(e -> e.getFormattedMessage().contains("Too many open files")
                || (e.getThrowableProxy() != null && String.valueOf(e.getThrowableProxy().getMessage())
                        .contains("Too many open files")));
    }

    private double dropped(String port, String reason) {
        Counter c = meters.find("servegate.connections.dropped").tags("port", port, "reason", reason).counter();
        return c == null ? 0 : c.count();
    }

    /** Waits until the gateway has refused {@code expected} connections over the share on {@code port}. */
    private void awaitCount(String port, int expected) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (dropped(port, "per-client-limit") < expected && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertThat(dropped(port, "per-client-limit")).as("%s: connections over the shares", port)
                .isEqualTo(expected);
    }
}
