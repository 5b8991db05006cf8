package io.servegate.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.FreePort;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ServerLiveRequest;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Each port takes at most {@code servegate.connections.max-connections} connections: one more is
 * closed at once (and counted), those within the cap stay open, and once they are gone the port
 * serves again. The timeouts are long here, so only the cap can close anything.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0",
    "servegate.connections.max-connections=" + ConnectionLimitTest.CAP,
    "servegate.connections.http.header-timeout=60s",
    "servegate.connections.http.idle-timeout=60s",
    "servegate.connections.grpc.handshake-timeout=60s"})
class ConnectionLimitTest {

    static final int CAP = 16;
    private static final int GRPC_PORT = FreePort.pick();

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    MeterRegistry meters;

    @DynamicPropertySource
    static void grpcPort(DynamicPropertyRegistry properties) {
        properties.add("servegate.oip.grpc-port", () -> GRPC_PORT);
    }

    @Test
    void connectionsBeyondTheCapAreClosedAtOnce() throws Exception {
        record Port(String name, int number) {
        }
        for (Port port : List.of(new Port("query", queryPort), new Port("admin", adminServer.port()),
                new Port("grpc", GRPC_PORT))) {
            List<Socket> within = new ArrayList<>();
            try {
                for (int i = 0; i < CAP; i++) {
                    within.add(new Socket(InetAddress.getLoopbackAddress(), port.number()));
                }
                Thread.sleep(300); // the gateway has accepted them
                for (int i = 0; i < 3; i++) {
                    try (Socket over = new Socket(InetAddress.getLoopbackAddress(), port.number())) {
                        assertThat(closedWithin(over, Duration.ofSeconds(5))).as("%s: connection over the cap", port)
                                .isTrue();
                    }
                }
                for (Socket s : within) {
                    assertThat(closedWithin(s, Duration.ofMillis(20))).as("%s: connection within the cap", port)
                            .isFalse();
                }
            } finally {
                for (Socket s : within) {
                    s.close();
                }
            }
            assertThat(meters.find("servegate.connections.dropped").tags("port", port.name(), "reason", "limit")
                    .counter()).as(port.name()).isNotNull().satisfies(c -> assertThat(c.count()).isEqualTo(3));
        }
        // with the held connections gone, every port serves again
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        while (true) {
            try {
                assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + queryPort
                        + "/v2/health/live")).timeout(Duration.ofSeconds(2)).build(),
                        HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
                assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminServer.port()
                        + "/admin/ping")).timeout(Duration.ofSeconds(2)).build(),
                        HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
                break;
            } catch (IOException e) {
                assertThat(System.nanoTime()).as("served again: " + e).isLessThan(until);
                Thread.sleep(100);
            }
        }
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", GRPC_PORT).usePlaintext().build();
        try {
            assertThat(GRPCInferenceServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .serverLive(ServerLiveRequest.getDefaultInstance()).getLive()).isTrue();
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static boolean closedWithin(Socket s, Duration wait) throws IOException {
        s.setSoTimeout((int) wait.toMillis());
        try {
            InputStream in = s.getInputStream();
            return in.read() < 0;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset
        }
    }
}
