package io.servegate.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.Search;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.connections.ConnectionBudget;
import io.servegate.gateway.testsupport.FreePort;
import io.servegate.gateway.testsupport.LoopbackClients;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ServerLiveRequest;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Many client addresses together fill the connection budget with idle and half-open connections,
 * each address under its share (eight addresses, 127.0.0.10 to .17, 12 connections each on the query
 * and OIP gRPC ports, against a budget of 60 and a share of 20): a new client from yet another
 * address still connects and is answered on the query, admin and gRPC ports, because an idle
 * connection of the address holding the most is evicted for it, counted as {@code evicted}. Timeouts
 * are long here, so only the budget and eviction close anything.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0",
    "servegate.connections.max-total-connections=" + ConnectionEvictionTest.BUDGET,
    "servegate.connections.max-connections-per-client=20",
    "servegate.connections.http.header-timeout=60s",
    "servegate.connections.http.idle-timeout=60s",
    "servegate.connections.grpc.handshake-timeout=60s"})
@DirtiesContext
class ConnectionEvictionTest {

    static final int BUDGET = 60;
    private static final int FLOODERS = 8;
    private static final int GRPC_PORT = FreePort.pick();

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ConnectionBudget budget;

    @Autowired
    MeterRegistry meters;

    @DynamicPropertySource
    static void ports(DynamicPropertyRegistry properties) {
        properties.add("servegate.oip.grpc-port", () -> GRPC_PORT);
    }

    @Test
    void manyAddressesFillingTheBudgetCannotKeepANewClientOut() throws Exception {
        List<Socket> flood = new ArrayList<>();
        try {
            for (int i = 0; i < 12; i++) {
                for (int f = 0; f < FLOODERS; f++) {
                    String from = "127.0.0." + (10 + f);
                    Socket s = LoopbackClients.connect(from, i % 2 == 0 ? queryPort : GRPC_PORT);
                    flood.add(s);
                    if (i % 4 == 2) { // half-open on the query port: a request begun, never finished
                        s.getOutputStream().write("POST /app/predict HTTP/1.1\r\nHost: a\r\n"
                                .getBytes(StandardCharsets.US_ASCII));
                    } else if (i % 4 == 3) { // half-open on the gRPC port: half the HTTP/2 preface
                        s.getOutputStream().write("PRI * HTTP/2.0\r\n".getBytes(StandardCharsets.US_ASCII));
                    }
                }
            }
            // each connection over the budget is refused, or evicts an idle one of a flooder holding more
            // (the gateway may accept the two ports' connections in another order than they were made)
            awaitDropped(flood.size() - BUDGET);
            double evictedByFlood = dropped("evicted");
            assertThat(budget.open()).as("the budget is spent").isEqualTo(BUDGET);

            assertThat(LoopbackClients.getFrom("127.0.0.2", queryPort, "/v2/health/live"))
                    .as("a new client on the query port").startsWith("HTTP/1.1 200");
            assertThat(LoopbackClients.getFrom("127.0.0.3", adminServer.port(), "/admin/ping"))
                    .as("a new client on the admin port").startsWith("HTTP/1.1 200");
            ManagedChannel channel = LoopbackClients.grpcFrom("127.0.0.4", GRPC_PORT);
            try {
                assertThat(GRPCInferenceServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                        .serverLive(ServerLiveRequest.getDefaultInstance()).getLive()).as("a new gRPC client").isTrue();
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            assertThat(dropped("evicted") - evictedByFlood).as("idle flood connections evicted for the new clients")
                    .isBetween(1.0, 3.0);
            assertThat(budget.open()).as("the budget holds").isLessThanOrEqualTo(BUDGET);
        } finally {
            for (Socket s : flood) {
                s.close();
            }
        }
    }

    private double dropped(String reason) {
        return Search.in(meters).name("servegate.connections.dropped").tag("reason", reason).counters().stream()
                .mapToDouble(Counter::count).sum();
    }

    /** Waits until {@code expected} connections have been refused by the budget or evicted. */
    private void awaitDropped(int expected) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (dropped("budget") + dropped("evicted") < expected && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertThat(dropped("budget") + dropped("evicted")).as("connections refused or evicted").isEqualTo(expected);
    }
}
