package io.servegate.gateway.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.gateway.testsupport.ContainerProcess;
import io.servegate.gateway.testsupport.GatewayChild;
import io.servegate.gateway.testsupport.HttpLoad;
import io.servegate.gateway.testsupport.HttpLoad.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A noisy app at 10× its quota beside a quiet app, both on one emulated replica that serves 40
 * queries/s (25 ms per query, batch size 1): the quiet app offers 10/s, the noisy one 100/s against
 * a quota of 10/s. Unlimited, the noisy app alone would be 2.5× the replica's capacity and the
 * quiet app's queries would queue behind it; within its quota the two together use half of it. So
 * the quiet app's predictions stay within 2 % of what it gets alone, and the noisy app's excess gets
 * 429 with {@code Retry-After} at the door, never reaching the replica. (Low rates, as in
 * {@link OverloadTest}: the replica, not a shared machine's CPU, must be what is contended.)
 */
class QuotaIsolationTest {

    static final long SLO_MICROS = 1_000_000;
    static final int QUIET_PER_SECOND = 10;
    static final int NOISY_PER_SECOND = 100;
    static final int NOISY_QUOTA = 10;
    static final int NOISY_BURST = 5;
    static final Duration PHASE = Duration.ofSeconds(8);

    @Test
    void aNoisyAppBeyondItsQuotaLeavesTheQuietAppsGoodputAsItWasAlone() throws Exception {
        try (ContainerProcess c = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "shared",
                "--version", "1", "--beta-ms", "25", "--alpha-ms", "0");
                GatewayChild gw = GatewayChild.start("256m")) {
            HttpLoad http = new HttpLoad();
            String admin = gw.adminUrl() + "/admin/";
            ok(http.post(admin + "add_model", Map.of("model_name", "shared", "model_version", "1",
                    "input_type", "floats", "batch_size", 1)));
            ok(http.post(admin + "add_container", Map.of("model_name", "shared", "model_version", "1",
                    "address", c.address())));
            ok(http.post(admin + "add_app", Map.of("name", "quiet", "input_type", "floats", "default_output", "-1",
                    "latency_slo_micros", SLO_MICROS, "candidate_model_names", List.of("shared"))));
            ok(http.post(admin + "add_app", Map.of("name", "noisy", "input_type", "floats", "default_output", "-1",
                    "latency_slo_micros", SLO_MICROS, "candidate_model_names", List.of("shared"),
                    "overload_response", "reject",
                    "rate_limit", Map.of("per_second", NOISY_QUOTA, "burst", NOISY_BURST))));
            assertThat(http.post(admin + "get_application", Map.of("name", "noisy")).body().path("rate_limit")
                    .path("per_second").asDouble()).isEqualTo(NOISY_QUOTA);
            http.awaitPrediction(gw.url() + "/quiet/predict");
            // warm both paths (answers and quota refusals) so that the phases compare steady states
            http.closedLoop(gw.url() + "/noisy/predict", 2, Duration.ofSeconds(3),
                    (client, i) -> Map.of("input", new float[] {client, i, 1}));

            List<Outcome> alone = drive(http, gw, false).get("quiet");
            Map<String, List<Outcome>> together = drive(http, gw, true);
            List<Outcome> quiet = together.get("quiet");
            List<Outcome> noisy = together.get("noisy");

            long aloneOk = HttpLoad.count(alone, o -> inSlo(o));
            long quietOk = HttpLoad.count(quiet, o -> inSlo(o));
            long refused = HttpLoad.count(noisy, o -> o.status() == 429);
            long noisyAdmitted = HttpLoad.count(noisy, o -> o.status() == 200);
            System.out.printf("QUOTA quiet alone %d/%d predicted in SLO, beside the noisy app %d/%d; noisy %d sent, "
                    + "%d admitted, %d refused 429 (%s)%n", aloneOk, alone.size(), quietOk, quiet.size(), noisy.size(),
                    noisyAdmitted, refused, HttpLoad.latencies(noisy));

            double aloneShare = (double) aloneOk / alone.size();
            double besideShare = (double) quietOk / quiet.size();
            assertThat(besideShare).as("the quiet app's goodput beside the noisy app, against %.3f alone", aloneShare)
                    .isGreaterThanOrEqualTo(aloneShare - 0.02);
            assertThat(HttpLoad.count(noisy, o -> o.status() != 200 && o.status() != 429))
                    .as("the noisy app gets answers or 429, nothing else").isZero();
            assertThat(noisy).filteredOn(o -> o.status() == 429).allSatisfy(o -> {
                assertThat(o.retryAfter()).as("Retry-After on a quota refusal").isNotBlank();
                assertThat(o.body().path("error").asString()).isNotBlank();
            });
            // the bucket admits its burst plus its rate over the phase (and a second of slack for the scheduler)
            long allowed = NOISY_BURST + NOISY_QUOTA * (PHASE.toSeconds() + 1);
            assertThat(noisyAdmitted).as("noisy queries admitted within the quota").isLessThanOrEqualTo(allowed);
            assertThat(refused).as("the noisy app's excess refused").isGreaterThanOrEqualTo(noisy.size() - allowed);
        }
    }

    /** One phase of open-loop load: the quiet app at its rate, and the noisy one beside it when asked. */
    private static Map<String, List<Outcome>> drive(HttpLoad http, GatewayChild gw, boolean withNoisy)
            throws Exception {
        List<CompletableFuture<Outcome>> quiet = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Outcome>> noisy = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger seq = new AtomicInteger();
        ScheduledExecutorService ticks = Executors.newScheduledThreadPool(2);
        ticks.scheduleAtFixedRate(() -> quiet.add(http.postAsync(gw.url() + "/quiet/predict",
                Map.of("input", new float[] {seq.incrementAndGet(), 2, 3}))), 0, 1000 / QUIET_PER_SECOND,
                TimeUnit.MILLISECONDS);
        if (withNoisy) {
            ticks.scheduleAtFixedRate(() -> noisy.add(http.postAsync(gw.url() + "/noisy/predict",
                    Map.of("input", new float[] {-seq.incrementAndGet(), 2, 3}))), 0, 1000 / NOISY_PER_SECOND,
                    TimeUnit.MILLISECONDS);
        }
        Thread.sleep(PHASE.toMillis());
        ticks.shutdown();
        ticks.awaitTermination(10, TimeUnit.SECONDS);
        return Map.of("quiet", await(quiet), "noisy", await(noisy));
    }

    private static List<Outcome> await(List<CompletableFuture<Outcome>> sent) throws Exception {
        List<Outcome> out = new ArrayList<>();
        for (CompletableFuture<Outcome> f : List.copyOf(sent)) {
            out.add(f.get(30, TimeUnit.SECONDS));
        }
        return out;
    }

    private static boolean inSlo(Outcome o) {
        return o.predicted() && o.latencyNanos() <= SLO_MICROS * 1000;
    }

    private static void ok(Outcome o) {
        assertThat(o.status()).as(String.valueOf(o.body())).isEqualTo(200);
    }
}
