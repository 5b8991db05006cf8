package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.FreePort;
import io.servegate.gateway.testsupport.GatewayChild;
import io.servegate.gateway.testsupport.HttpLoad;
import io.servegate.gateway.testsupport.JavaCommand;
import io.servegate.gateway.testsupport.LoopbackClients;
import io.servegate.gateway.testsupport.RedisServer;
import io.servegate.oip.GRPCInferenceServiceGrpc;
import io.servegate.oip.ServerLiveRequest;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import tools.jackson.databind.JsonNode;

/**
 * The gateway in its own process under a real descriptor limit ({@code ulimit -n 1024}, so its
 * connection budget is 512), with two emulated replicas it started itself, flooded on every port
 * (query, admin, OIP gRPC, fleet) from six addresses with more idle and half-open connections
 * (960) than the process may hold descriptors at all. During the flood real queries are
 * predicted, new clients from other addresses are answered on the query, admin and gRPC ports,
 * and the process stays under its limit. One replica's health path is then killed (SIGSTOP: its
 * checks time out and SIGTERM does nothing) while the flood still holds the budget; once the
 * flood ends, the gateway is back to full service (both replicas ready, the frozen process
 * replaced, queries predicted) within 30 s, and its log never says {@code Too many open files}.
 */
@EnabledOnOs(OS.LINUX)
class DescriptorExhaustionTest {

    private static final int DESCRIPTORS = 1024;
    private static final List<String> FLOODERS = List.of("127.0.0.10", "127.0.0.11", "127.0.0.12", "127.0.0.13",
            "127.0.0.14", "127.0.0.15");
    /** Connections each flooder opens on each port: 6 × 4 × 40 = 960. */
    private static final int EACH = 40;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void aFloodBeyondTheDescriptorLimitLeavesTheGatewayServingAndItHealsAfterwards() throws Exception {
        int grpcPort = FreePort.pick();
        int fleetPort = FreePort.pick();
        List<String> replica = JavaCommand.inTempDirectory("servegate-exhaustion", ContainerProcess.EMULATED);
        List<Socket> flood = new ArrayList<>();
        try (RedisServer redis = RedisServer.start();
                GatewayChild gw = GatewayChild.startWithDescriptorLimit(DESCRIPTORS, "256m",
                        "--servegate.registry.store=redis", "--servegate.registry.redis-uri=" + redis.uri(),
                        "--servegate.fleet.secret=exhaustion-secret", "--servegate.fleet.advertise-host=127.0.0.1",
                        "--servegate.fleet.port=" + fleetPort, "--servegate.oip.grpc-port=" + grpcPort,
                        "--servegate.connections.max-connections-per-client=100",
                        "--servegate.connections.http.header-timeout=120s",
                        "--servegate.connections.http.idle-timeout=120s",
                        "--servegate.connections.grpc.handshake-timeout=120s",
                        "--servegate.containers.stop-grace-period=2s",
                        "--servegate.containers.process.allowed-commands[0]=" + String.join(",", replica),
                        "--servegate.containers.process.require-admin-token=false")) {
            HttpLoad load = new HttpLoad();
            String admin = gw.adminUrl() + "/admin/";
            String predict = gw.url() + "/heal/predict";
            assertThat(load.post(admin + "add_app", Map.of("name", "heal", "input_type", "floats",
                    "default_output", "-1", "latency_slo_micros", 2_000_000)).status()).isEqualTo(200);
            assertThat(load.post(admin + "deploy_model", Map.of("model_name", "emu", "model_version", "1",
                    "input_type", "floats", "num_replicas", 2, "command", replica)).status()).isEqualTo(200);
            assertThat(load.post(admin + "add_model_links", Map.of("app_name", "heal", "model_names",
                    List.of("emu"))).status()).isEqualTo(200);
            load.awaitPrediction(predict);
            awaitDeployment(gw, d -> d.get("ready_replicas").asInt() == 2, Duration.ofSeconds(60), "two ready");
            long before = gw.descriptorsOpen();

            List<int[]> ports = List.of(new int[] {gw.port(), 'h'}, new int[] {gw.adminPort(), 'h'},
                    new int[] {grpcPort, 'g'}, new int[] {fleetPort, 'g'});
            for (int i = 0; i < EACH; i++) {
                for (String flooder : FLOODERS) {
                    for (int[] port : ports) {
                        Socket s = LoopbackClients.connect(flooder, port[0]);
                        flood.add(s);
                        if (i % 2 == 1) { // half-open: a request or preface begun, never finished
                            s.getOutputStream().write((port[1] == 'h' ? "POST /heal/predict HTTP/1.1\r\nHost: a\r\n"
                                    : "PRI * HTTP/2.0\r\n").getBytes(StandardCharsets.US_ASCII));
                        }
                    }
                }
            }
            assertThat(flood.size()).as("more connections than the process may hold").isGreaterThan(
                    DESCRIPTORS - (int) before);

            for (int i = 1; i <= 20; i++) {
                assertThat(load.post(predict, Map.of("input", new float[] {i, 0, 1})).predicted())
                        .as("query %d during the flood", i).isTrue();
            }
            assertThat(LoopbackClients.getFrom("127.0.0.2", gw.port(), "/v2/health/live"))
                    .as("a new client on the query port").startsWith("HTTP/1.1 200");
            assertThat(LoopbackClients.getFrom("127.0.0.3", gw.adminPort(), "/admin/ping"))
                    .as("a new client on the admin port").startsWith("HTTP/1.1 200");
            ManagedChannel channel = LoopbackClients.grpcFrom("127.0.0.4", grpcPort);
            try {
                assertThat(GRPCInferenceServiceGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS)
                        .serverLive(ServerLiveRequest.getDefaultInstance()).getLive()).as("a new gRPC client").isTrue();
            } finally {
                channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            }
            long during = gw.descriptorsOpen();
            assertThat(during).as("descriptors held during the flood (before it: %d)", before)
                    .isLessThan(DESCRIPTORS);

            // the health path of one replica dies while the flood still holds the budget
            ProcessHandle frozen = gw.descendants().stream().filter(p -> p.info().commandLine()
                    .map(c -> c.contains(replica.get(1))).orElse(false)).findFirst().orElseThrow();
            assertThat(new ProcessBuilder("kill", "-STOP", Long.toString(frozen.pid())).start().waitFor()).isZero();
            awaitDeployment(gw, d -> d.get("ready_replicas").asInt() < 2, Duration.ofSeconds(30),
                    "the frozen replica no longer ready");
            for (Socket s : flood) {
                s.close();
            }
            long floodEnded = System.nanoTime();

            JsonNode healed = awaitDeployment(gw, d -> d.get("ready_replicas").asInt() == 2
                    && !frozen.isAlive(), Duration.ofSeconds(30), "back to two ready replicas");
            long restarts = 0;
            for (JsonNode r : healed.get("replicas")) {
                assertThat(r.get("state").asString()).as("replica %s", r.get("container_id")).isEqualTo("ready");
                restarts += r.get("restarts").asLong();
            }
            assertThat(restarts).as("the frozen replica was replaced").isGreaterThanOrEqualTo(1);
            for (int i = 1; i <= 20; i++) {
                assertThat(load.post(predict, Map.of("input", new float[] {i, 1, 0})).predicted())
                        .as("query %d after the flood", i).isTrue();
            }
            assertThat(Duration.ofNanos(System.nanoTime() - floodEnded)).as("back to full service")
                    .isLessThan(Duration.ofSeconds(30));
            System.out.printf("descriptors: %d before the flood, %d during it (limit %d, %d flood connections)%n",
                    before, during, DESCRIPTORS, flood.size());
            assertThat(gw.logContains("Too many open files")).as("the gateway's log: %s", gw.tail(30)).isFalse();
        } finally {
            for (Socket s : flood) {
                s.close();
            }
        }
    }

    /** Polls {@code get_deployments} until its one deployment matches {@code condition}. */
    private JsonNode awaitDeployment(GatewayChild gw, Predicate<JsonNode> condition, Duration timeout, String what)
            throws Exception {
        long until = System.nanoTime() + timeout.toNanos();
        JsonNode last = null;
        while (System.nanoTime() < until) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(gw.adminUrl()
                    + "/admin/get_deployments")).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            last = HttpLoad.JSON.readTree(r.body());
            if (last.size() == 1 && condition.test(last.get(0))) {
                return last.get(0);
            }
            Thread.sleep(100);
        }
        throw new AssertionError("timed out waiting for " + what + ": " + last);
    }
}
