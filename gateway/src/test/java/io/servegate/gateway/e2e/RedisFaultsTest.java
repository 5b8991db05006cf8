package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.GatewayChild;
import io.servegate.gateway.testsupport.HttpLoad;
import io.servegate.gateway.testsupport.HttpLoad.Outcome;
import io.servegate.gateway.testsupport.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A gateway process with its registry and selection states in a real, durable Redis
 * ({@code appendfsync always}), two emulated models behind an Exp3 app, predictions and feedback
 * flowing. Redis is SIGKILLed for 3 s and restarted: predictions keep answering within the SLO,
 * feedback gets 503 while Redis is down and 200 again afterwards, and the observation count after
 * the restart holds every acknowledged feedback. Then the gateway itself is restarted against the
 * same Redis: apps, models, links and containers are all still there, and it predicts again.
 */
class RedisFaultsTest {

    static final long SLO_MICROS = 500_000;

    @Test
    void redisCrashLosesNoAcknowledgedFeedbackAndAGatewayRestartKeepsTheRegistry() throws Exception {
        try (RedisServer redis = RedisServer.startDurable();
                ContainerProcess m1 = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "m1",
                        "--version", "1");
                ContainerProcess m2 = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "m2",
                        "--version", "1")) {
            String[] store = {"--servegate.registry.store=redis", "--servegate.registry.redis-uri=" + redis.uri(),
                    "--servegate.selection.store=redis", "--servegate.fleet.secret=redis-faults"};
            HttpLoad http = new HttpLoad();
            try (GatewayChild gw = GatewayChild.start("256m", store)) {
                String admin = gw.adminUrl() + "/admin/";
                for (ContainerProcess m : List.of(m1, m2)) {
                    String name = m == m1 ? "m1" : "m2";
                    ok(http.post(admin + "add_model", Map.of("model_name", name, "model_version", "1",
                            "input_type", "floats")));
                    ok(http.post(admin + "add_container", Map.of("model_name", name, "model_version", "1",
                            "address", m.address(), "container_id", name + "-1")));
                }
                ok(http.post(admin + "add_app", Map.of("name", "learn", "input_type", "floats", "default_output",
                        "-1", "latency_slo_micros", SLO_MICROS, "candidate_model_names", List.of("m1", "m2"),
                        "selection_policy", "exp3")));
                ok(http.post(admin + "add_app", Map.of("name", "strict", "input_type", "floats", "default_output",
                        "-1", "latency_slo_micros", SLO_MICROS, "candidate_model_names", List.of("m1"),
                        "overload_response", "reject")));
                http.awaitPrediction(gw.url() + "/learn/predict");

                CompletableFuture<List<Outcome>> predictions = CompletableFuture.supplyAsync(() -> load(http,
                        gw.url() + "/learn/predict", 4));
                CompletableFuture<List<Outcome>> feedback = CompletableFuture.supplyAsync(() -> load(http,
                        gw.url() + "/learn/update", 2));
                Thread.sleep(2500);
                long down = http.now();
                redis.crash();
                Thread.sleep(3000);
                long up = http.now();
                redis.restart();
                List<Outcome> preds = predictions.get();
                List<Outcome> fb = feedback.get();

                long acked = HttpLoad.count(fb, o -> o.status() == 200 && o.body().path("observed").booleanValue());
                long refused = HttpLoad.count(fb, o -> o.status() == 503);
                Outcome last = http.post(gw.url() + "/learn/update", Map.of("input", new float[] {1, 2, 3},
                        "label", 2));
                ok(last);
                long stored = last.body().path("observations").longValue() - 1;
                List<Outcome> fbAfter = HttpLoad.sentBetween(fb, up + 1_500_000_000L, Long.MAX_VALUE);
                System.out.printf("REDIS crash for %.1f s: %d predictions (%d predicted, %d defaults, %d errors, "
                        + "%s); feedback %d acknowledged, %d refused 503, %d other; %d observations stored "
                        + "after restart (lost %d)%n", (up - down) / 1e9, preds.size(),
                        HttpLoad.count(preds, Outcome::predicted), HttpLoad.count(preds, Outcome::isDefault),
                        HttpLoad.count(preds, o -> o.status() != 200),
                        HttpLoad.latencies(preds), acked, refused,
                        fb.size() - acked - refused, stored, Math.max(0, acked - stored));

                assertThat(preds).as("predictions keep answering").allMatch(o -> o.status() == 200);
                assertThat(HttpLoad.answeredInTime(preds, SLO_MICROS)).as("at most 2 % later than SLO + 1 s; "
                        + HttpLoad.latencies(preds)).isTrue();
                assertThat(fb).as("feedback is acknowledged or refused with 503")
                        .allMatch(o -> o.status() == 200 || o.status() == 503);
                assertThat(HttpLoad.count(HttpLoad.sentBetween(fb, down + 500_000_000L, up), o -> o.status() == 503))
                        .as("feedback refused while Redis is down").isPositive();
                assertThat(HttpLoad.count(fbAfter, o -> o.status() == 200)).as("feedback works after the restart")
                        .isPositive();
                assertThat(stored).as("no acknowledged feedback lost").isGreaterThanOrEqualTo(acked);
                // a refused write may still have reached the disk just before the crash, never more
                assertThat(stored).isLessThanOrEqualTo(acked + refused);
            }

            long restart = System.nanoTime();
            try (GatewayChild again = GatewayChild.start("256m", store)) {
                String admin = again.adminUrl() + "/admin/";
                Outcome app = http.post(admin + "get_application", Map.of("name", "learn"));
                ok(app);
                assertThat(app.body().path("selection_policy").asString()).isEqualTo("exp3");
                assertThat(app.body().path("linked_models").toString()).contains("m1", "m2");
                assertThat(http.post(admin + "get_application", Map.of("name", "strict")).body()
                        .path("overload_response").asString()).isEqualTo("reject");
                assertThat(http.post(admin + "get_all_models", Map.of()).body().size()).isEqualTo(2);
                assertThat(http.post(admin + "get_all_containers", Map.of()).body().size()).isEqualTo(2);
                http.awaitPrediction(again.url() + "/learn/predict");
                System.out.printf("REDIS gateway restart: registry intact, predicting %.1f s after the new process "
                        + "started%n", (System.nanoTime() - restart) / 1e9);
            }
        }
    }

    private static List<Outcome> load(HttpLoad http, String url, int clients) {
        try {
            return http.closedLoop(url, clients, Duration.ofSeconds(9), (client, i) -> Map.of(
                    "input", new float[] {client, i % 7, 3}, "label", (client + i) % 3));
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void ok(Outcome o) {
        assertThat(o.status()).as(String.valueOf(o.body())).isEqualTo(200);
    }
}
