package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.GatewayChild;
import io.servegate.gateway.testsupport.HttpLoad;
import io.servegate.gateway.testsupport.HttpLoad.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * SIGTERM to a gateway process under load (16 clients, a 40 ms container, 1 s SLO): every
 * query sent before the signal is answered (prediction or default; none reset), the gateway then
 * stops taking connections and exits with 0 or 143 within the shutdown bound.
 */
class GracefulShutdownTest {

    static final long SLO_MICROS = 1_000_000;

    @Test
    void sigtermUnderLoadAnswersEveryAcceptedQueryThenExits() throws Exception {
        try (ContainerProcess c = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "drain",
                "--version", "1", "--beta-ms", "40", "--alpha-ms", "1");
                GatewayChild gw = GatewayChild.start("256m")) {
            HttpLoad http = new HttpLoad();
            String admin = gw.adminUrl() + "/admin/";
            http.post(admin + "add_app", Map.of("name", "drainapp", "input_type", "floats", "default_output", "-1",
                    "latency_slo_micros", SLO_MICROS, "candidate_model_names", List.of()));
            http.post(admin + "add_model", Map.of("model_name", "drain", "model_version", "1", "input_type", "floats"));
            http.post(admin + "add_model_links", Map.of("app_name", "drainapp", "model_names", List.of("drain")));
            http.post(admin + "add_container", Map.of("model_name", "drain", "model_version", "1",
                    "address", c.address()));
            http.awaitPrediction(gw.url() + "/drainapp/predict");

            CompletableFuture<List<Outcome>> load = CompletableFuture.supplyAsync(() -> {
                try {
                    return http.closedLoop(gw.url() + "/drainapp/predict", 16, Duration.ofMillis(4500),
                            (client, i) -> Map.of("input", new float[] {client, i, 1}));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(2500);
            long signalled = http.now();
            gw.terminate();
            int exit = gw.awaitExit(Duration.ofSeconds(20));
            long exited = http.now();
            List<Outcome> out = load.get();

            List<Outcome> before = out.stream().filter(o -> o.sentNanos() < signalled).toList();
            long inFlight = HttpLoad.count(before, o -> o.sentNanos() + o.latencyNanos() > signalled);
            List<Outcome> afterwards = out.stream().filter(o -> o.sentNanos() >= signalled).toList();
            System.out.printf("SHUTDOWN exit %d after %.2f s; %d queries before SIGTERM (%d in flight at the signal, "
                    + "%s): %d predicted, %d defaults, %d failed; %d sent afterwards: %d answered, %d refused%n",
                    exit, (exited - signalled) / 1e9, before.size(), inFlight, HttpLoad.latencies(before),
                    HttpLoad.count(before, Outcome::predicted), HttpLoad.count(before, Outcome::isDefault),
                    HttpLoad.count(before, o -> o.status() != 200), afterwards.size(),
                    HttpLoad.count(afterwards, o -> o.status() == 200), HttpLoad.count(afterwards, o -> o.status() == 0));

            assertThat(exit).as("exit status (143 = SIGTERM)").isIn(0, 143);
            assertThat(inFlight).as("queries were in flight at the signal").isPositive();
            assertThat(before).as("every query sent before SIGTERM is answered, none reset")
                    .allSatisfy(o -> assertThat(o.status()).as(String.valueOf(o.error())).isEqualTo(200));
            assertThat(HttpLoad.answeredInTime(before, SLO_MICROS)).as("at most 2 % later than SLO + 1 s; "
                    + HttpLoad.latencies(before)).isTrue();
            assertThat(afterwards).as("after the signal: answered or refused, never an HTTP error")
                    .allMatch(o -> o.status() == 200 || o.status() == 0);
            assertThat(HttpLoad.count(afterwards, o -> o.status() == 0)).as("new connections refused")
                    .isPositive();
        }
    }
}
