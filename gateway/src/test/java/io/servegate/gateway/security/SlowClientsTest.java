package io.servegate.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.FreePort;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ServerLiveRequest;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Slow and idle clients are cut off on every port. Many connections are held half-open against a
 * real gateway (nothing sent; half a request line; headers without their end; headers sent a
 * byte at a time; a chunked body never finished; fewer body bytes than Content-Length; a request
 * answered and then nothing on the kept-alive connection; on the gRPC port, nothing or half of
 * the HTTP/2 preface) while other clients keep calling all three
 * ports, and each of those calls must be answered promptly. Every half-open connection must then
 * be closed by the gateway within its timeout (short ones here), each closing counted in
 * {@code servegate.connections.dropped}, and the log must hold a few summary lines, not one per
 * connection.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0",
    "servegate.connections.max-connections=400",
    "servegate.connections.log-interval=500ms",
    "servegate.connections.http.header-timeout=1s",
    "servegate.connections.http.read-timeout=1s",
    "servegate.connections.http.request-timeout=3s",
    "servegate.connections.http.idle-timeout=2s",
    "servegate.connections.grpc.handshake-timeout=1s"})
class SlowClientsTest {

    private static final int GRPC_PORT = FreePort.pick();
    private static final int EACH = 20;
    /** The longest timeout above, with room for a loaded machine. */
    private static final Duration CLOSED_WITHIN = Duration.ofSeconds(8);

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

    /** What a slow client sends before it stops. */
    private enum Half {
        NOTHING(""),
        HALF_REQUEST_LINE("POST /app/pre"),
        HEADERS_WITHOUT_END("POST /app/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"),
        UNFINISHED_CHUNKED("POST /app/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n10\r\n{\"input\":"),
        SHORT_BODY("POST /app/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: 100\r\n\r\n{\"input\":[1,"),
        /** A whole request, answered; then nothing, on a kept-alive connection. */
        ANSWERED_THEN_IDLE("GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n"),
        /** Headers at a byte every 200 ms, which an idle timeout alone never notices. */
        TRICKLE("POST /app/predict HTTP/1.1\r\nHost: x\r\nX-Slow: " + "a".repeat(200));

        final String text;

        Half(String text) {
            this.text = text;
        }
    }

    @Test
    void halfOpenConnectionsAreClosedWhileOtherClientsAreAnswered() throws Exception {
        ListAppender<ILoggingEvent> log = new ListAppender<>();
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        log.start();
        root.addAppender(log);
        List<Held> held = new ArrayList<>();
        Thread trickler = null;
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", GRPC_PORT).usePlaintext().build();
        try {
            for (int port : List.of(queryPort, adminServer.port())) {
                for (Half half : Half.values()) {
                    for (int i = 0; i < EACH; i++) {
                        held.add(Held.open(port, half.name(), half == Half.TRICKLE ? "" : half.text));
                    }
                }
            }
            for (int i = 0; i < EACH; i++) {
                held.add(Held.open(GRPC_PORT, "grpc nothing", ""));
                held.add(Held.open(GRPC_PORT, "grpc half preface", "PRI * HTTP/2.0\r\n"));
            }
            trickler = trickle(held.stream().filter(h -> h.what.equals(Half.TRICKLE.name())).toList());

            // the other clients: every call answered, each promptly, while the slow ones are held
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            var oip = GRPCInferenceServiceGrpc.newBlockingStub(channel);
            for (int call = 0; call < 20; call++) {
                long start = System.nanoTime();
                assertThat(get(http, queryPort, "/v2/health/ready").statusCode()).isEqualTo(200);
                assertThat(get(http, adminServer.port(), "/admin/ping").statusCode()).isEqualTo(200);
                assertThat(oip.withDeadlineAfter(5, TimeUnit.SECONDS).serverLive(ServerLiveRequest.getDefaultInstance())
                        .getLive()).isTrue();
                assertThat(Duration.ofNanos(System.nanoTime() - start)).as("call %d", call)
                        .isLessThan(Duration.ofSeconds(3));
                Thread.sleep(50);
            }

            List<String> open = new ArrayList<>();
            long until = System.nanoTime() + CLOSED_WITHIN.toNanos();
            for (Held h : held) {
                if (!h.closedBy(until)) {
                    open.add(h.what + " on port " + h.port);
                }
            }
            assertThat(open).as("half-open connections still open after " + CLOSED_WITHIN).isEmpty();
        } finally {
            if (trickler != null) {
                trickler.interrupt();
            }
            held.forEach(Held::close);
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            root.detachAppender(log);
        }

        double http = dropped("query") + dropped("admin");
        assertThat(http).as("HTTP connections closed by timeout").isGreaterThanOrEqualTo(2 * Half.values().length * EACH);
        assertThat(dropped("grpc")).as("gRPC connections closed by the handshake timeout").isGreaterThanOrEqualTo(2 * EACH);
        assertThat(meters.find("servegate.connections.dropped").tag("reason", "idle-timeout").counters().stream()
                .mapToDouble(c -> c.count()).sum()).as("kept-alive connections closed when idle")
                .isGreaterThanOrEqualTo(2 * EACH);
        assertThat(meters.find("servegate.connections.dropped").tag("reason", "abandoned").counters().stream()
                .mapToDouble(c -> c.count()).sum()).as("connections the clients left (none: the gateway closed them)")
                .isZero();
        Thread.sleep(1500); // the last interval's summary
        List<ILoggingEvent> warnings = log.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
                .toList();
        assertThat(warnings).as("warnings about %d dropped connections", held.size()).hasSizeLessThan(20)
                .anySatisfy(e -> assertThat(e.getFormattedMessage()).contains("connections", "header-timeout"));
    }

    private double dropped(String port) {
        return meters.find("servegate.connections.dropped").tag("port", port).counters().stream()
                .mapToDouble(c -> c.count()).sum();
    }

    private static HttpResponse<String> get(HttpClient http, int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Sends one more byte of the trickling connections' headers every 200 ms, until they are closed. */
    private static Thread trickle(List<Held> slow) {
        Thread t = new Thread(() -> {
            byte[] text = Half.TRICKLE.text.getBytes(StandardCharsets.US_ASCII);
            for (int i = 0; !Thread.currentThread().isInterrupted(); i = (i + 1) % text.length) {
                for (Held h : slow) {
                    try {
                        h.socket.getOutputStream().write(text[i]);
                    } catch (IOException e) {
                        // closed by the gateway: what is expected
                    }
                }
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "trickle");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** A connection a slow client holds open. */
    private record Held(Socket socket, int port, String what) {

        static Held open(int port, String what, String sent) throws IOException {
            Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
            s.getOutputStream().write(sent.getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            return new Held(s, port, what);
        }

        /** Whether the gateway closes it (EOF or reset, after an error answer if any) before {@code until}. */
        boolean closedBy(long until) {
            try {
                InputStream in = socket.getInputStream();
                byte[] buf = new byte[4096];
                while (true) {
                    long left = TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime());
                    if (left <= 0) {
                        return false;
                    }
                    socket.setSoTimeout((int) left);
                    if (in.read(buf) < 0) {
                        return true;
                    }
                }
            } catch (SocketTimeoutException e) {
                return false;
            } catch (IOException e) {
                return true; // reset
            }
        }

        void close() {
            try {
                socket.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
