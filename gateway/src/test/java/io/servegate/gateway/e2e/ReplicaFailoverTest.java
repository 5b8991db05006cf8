package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.api.AdminServer;
import io.servegate.gateway.testsupport.ContainerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * Two emulated replicas (β = 5 ms, α = 0.5 ms) in their own processes; one is SIGKILLed under
 * load. Every query must still be answered (prediction or default) near its SLO, nothing may
 * hang, and predictions must keep flowing from the survivor.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "servegate.admin.port=0")
class ReplicaFailoverTest {

    private static final long SLO_MICROS = 100_000;

    @LocalServerPort
    int queryPort;

    @Autowired
    AdminServer adminServer;

    @Autowired
    ObjectMapper json;

    record Answer(long sentNanos, long latencyNanos, boolean isDefault, String explanation) {
    }

    @Test
    void killingOneOfTwoReplicasUnderLoadMovesTrafficToTheSurvivor() throws Exception {
        try (ContainerProcess a = ContainerProcess.start("io.servegate.containers.emulated.EmulatedContainer",
                "--name", "emu", "--version", "1", "--beta-ms", "5", "--alpha-ms", "0.5");
                ContainerProcess b = ContainerProcess.start("io.servegate.containers.emulated.EmulatedContainer",
                        "--name", "emu", "--version", "1", "--beta-ms", "5", "--alpha-ms", "0.5")) {
            WebClient admin = WebClient.create("http://127.0.0.1:" + adminServer.port());
            admin(admin, "add_app", Map.of("name", "emuapp", "input_type", "floats", "default_output", "none",
                    "latency_slo_micros", SLO_MICROS));
            admin(admin, "add_model", Map.of("model_name", "emu", "model_version", "1", "input_type", "floats"));
            admin(admin, "add_model_links", Map.of("app_name", "emuapp", "model_names", List.of("emu")));
            admin(admin, "add_container", Map.of("model_name", "emu", "model_version", "1", "address", a.address()));
            admin(admin, "add_container", Map.of("model_name", "emu", "model_version", "1", "address", b.address()));

            WebClient query = WebClient.create("http://127.0.0.1:" + queryPort);
            awaitTwoAvailable(admin);

            // a cold JVM (client and gateway) takes hundreds of milliseconds over its first queries
            Flux.range(0, 16).flatMap(client -> Flux.range(0, 20).concatMap(i -> predict(query, client, -1 - i,
                    Collections.synchronizedList(new ArrayList<>()))), 16).blockLast(Duration.ofSeconds(60));

            List<Answer> answers = Collections.synchronizedList(new ArrayList<>());
            long start = System.nanoTime();
            AtomicBoolean killed = new AtomicBoolean();
            long[] killedAt = {Long.MAX_VALUE};
            // 16 closed-loop clients for 4 s, distinct inputs so the cache does not answer; kill A at 1.5 s
            Flux.range(0, 16).flatMap(client -> Flux.range(0, Integer.MAX_VALUE)
                    .concatMap(i -> {
                        long now = System.nanoTime();
                        if (now - start > Duration.ofMillis(1500).toNanos() && killed.compareAndSet(false, true)) {
                            killedAt[0] = now;
                            return Mono.fromCallable(() -> {
                                a.kill();
                                return i;
                            }).then(predict(query, client, i, answers));
                        }
                        return predict(query, client, i, answers);
                    })
                    .takeWhile(x -> System.nanoTime() - start < Duration.ofSeconds(4).toNanos()), 16)
                    .blockLast(Duration.ofSeconds(30));

            assertThat(killed).isTrue();
            long late = answers.stream().filter(x -> x.latencyNanos() > (SLO_MICROS + 150_000) * 1000).count();
            assertThat(late).as("answers later than SLO + 150 ms (CI noise allowance)").isZero();
            List<Answer> afterKill = answers.stream().filter(x -> x.sentNanos() > killedAt[0] + 500_000_000L).toList();
            assertThat(afterKill).isNotEmpty();
            long predictedAfter = afterKill.stream().filter(x -> !x.isDefault()).count();
            assertThat(predictedAfter).as("the survivor keeps answering").isGreaterThan(afterKill.size() / 2);

            // the dead replica is out of rotation: its circuit opened or its queue is idle
            JsonNode containers = json.readTree(admin.post().uri("/admin/get_all_containers")
                    .contentType(MediaType.APPLICATION_JSON).bodyValue("{}").retrieve().bodyToMono(String.class)
                    .block());
            assertThat(containers).hasSize(2);
        }
    }

    private Mono<Integer> predict(WebClient query, int client, int i, List<Answer> answers) {
        float[] input = {client, i, client * 31 + i};
        long sent = System.nanoTime();
        return query.post().uri("/emuapp/predict").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("input", input)).retrieve().bodyToMono(String.class)
                .map(body -> {
                    JsonNode n = json.readTree(body);
                    answers.add(new Answer(sent, System.nanoTime() - sent, n.get("default").booleanValue(),
                            n.has("default_explanation") ? n.get("default_explanation").asString() : null));
                    return i;
                });
    }

    private void awaitTwoAvailable(WebClient admin) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < until) {
            JsonNode containers = json.readTree(admin.post().uri("/admin/get_all_containers")
                    .contentType(MediaType.APPLICATION_JSON).bodyValue("{}").retrieve().bodyToMono(String.class)
                    .block());
            long available = 0;
            for (JsonNode c : containers) {
                available += c.get("available").booleanValue() ? 1 : 0;
            }
            if (available == 2) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("replicas did not become available");
    }

    private static void admin(WebClient admin, String endpoint, Map<String, ?> body) {
        admin.post().uri("/admin/" + endpoint).contentType(MediaType.APPLICATION_JSON).bodyValue(body).retrieve()
                .toBodilessEntity().block(Duration.ofSeconds(10));
    }
}
