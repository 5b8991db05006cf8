package io.servegate.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Large bodies are admitted by the bytes they hold, per port and per client (remote address):
 * while one client holds an unfinished 400 KB body, its further large bodies are refused with 429
 * (its share is half of the port's 1 MB budget) and another client's large body is still admitted;
 * while the two hold 800 KB, a third client's large body is refused with 503 before any of it is
 * read, small requests are still served, and once the two are gone a large body is admitted again.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "servegate.admin.port=0",
    "servegate.limits.max-body-size=512KB",
    "servegate.connections.max-body-bytes-in-flight=1MB",
    "servegate.connections.http.read-timeout=60s",
    "servegate.connections.http.request-timeout=60s"})
class BodyBytesInFlightTest {

    private static final int LARGE = 400 * 1024;
    private static final InetAddress CLIENT_A = address(1);
    private static final InetAddress CLIENT_B = address(2);
    private static final InetAddress CLIENT_C = address(3);

    @LocalServerPort
    int queryPort;

    @Autowired
    MeterRegistry meters;

    @Test
    void largeBodiesBeyondAClientsShareOrThePortsBudgetAreRefusedAtOnceAndSmallOnesServed() throws Exception {
        List<Socket> held = new ArrayList<>();
        try {
            held.add(hold(CLIENT_A));
            awaitInFlight(LARGE);
            for (int i = 0; i < 3; i++) {
                String refused = post(CLIENT_A, LARGE, false);
                assertThat(refused).as("client A's next large body").startsWith("HTTP/1.1 429")
                        .contains("Retry-After: 1").contains("from this client");
            }
            assertThat(post(CLIENT_A, 20, true)).as("a small body of client A").startsWith("HTTP/1.1 404");

            held.add(hold(CLIENT_B));
            awaitInFlight(2.0 * LARGE);
            String refused = post(CLIENT_C, LARGE, false);
            assertThat(refused).as("a third client's large body").startsWith("HTTP/1.1 503").contains("\"overloaded\"");
            assertThat(post(CLIENT_C, 20, true)).as("a small body").startsWith("HTTP/1.1 404");
            assertThat(meters.get("servegate.connections.body.refused").tags("port", "query").counter().count())
                    .isEqualTo(1);
            assertThat(meters.get("servegate.connections.body.client.refused").tags("port", "query").counter()
                    .count()).isEqualTo(3);
        } finally {
            for (Socket s : held) {
                s.close();
            }
        }
        awaitInFlight(0);
        assertThat(post(CLIENT_A, LARGE, true)).as("a large body once the others are gone").startsWith("HTTP/1.1 404");
    }

    /** A connection from {@code client} that sends the head and the first bytes of a large body, and no more. */
    private Socket hold(InetAddress client) throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), queryPort, client, 0);
        s.getOutputStream().write(head("/nope/predict", LARGE));
        s.getOutputStream().write("{\"input\": [".getBytes(StandardCharsets.US_ASCII));
        return s;
    }

    private static byte[] head(String path, int length) {
        return ("POST " + path + " HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: "
                + length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    }

    /** Posts a body of {@code length} bytes to an unknown app (404 once read), sending the body only if {@code send}. */
    private String post(InetAddress client, int length, boolean send) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), queryPort, client, 0)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(head("/nope/predict", length));
            if (send) {
                byte[] body = new byte[length];
                byte[] json = "{\"input\": [1]}".getBytes(StandardCharsets.US_ASCII);
                java.util.Arrays.fill(body, (byte) ' ');
                System.arraycopy(json, 0, body, 0, json.length);
                s.getOutputStream().write(body);
            }
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        }
    }

    private void awaitInFlight(double bytes) throws InterruptedException {
        long until = System.nanoTime() + 10_000_000_000L;
        while (gauge() != bytes && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertThat(gauge()).as("body bytes in flight").isEqualTo(bytes);
    }

    private static InetAddress address(int last) {
        try {
            return InetAddress.getByAddress(new byte[] {127, 0, 0, (byte) last});
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    private double gauge() {
        return meters.get("servegate.connections.body.bytes").tags("port", "query").gauge().value();
    }
}
