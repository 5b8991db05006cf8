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
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * 10× capacity for 30 s against a gateway process with a 192 MB heap: one emulated replica that
 * serves 4 queries/s (250 ms per query, batch size 1) is offered 40 queries/s, split between an
 * app that answers overload with its default output and one that rejects it (503 + Retry-After).
 * Queues stay bounded (2), rejections are fast, the heap stays under its bound with no
 * OutOfMemoryError, and predictions are back within seconds after the burst. (The rates are low
 * so that the HTTP work itself stays well inside what a shared, loaded 2-core machine gives the
 * gateway: the replica, not the CPU, must be the bottleneck; it is the ratio that matters.)
 */
class OverloadTest {

    static final long SLO_MICROS = 1_000_000;
    static final int HEAP_MB = 192;
    static final int OFFERED_PER_SECOND = 40;
    static final Duration BURST = Duration.ofSeconds(30);

    @Test
    void tenTimesCapacityIsRejectedFastWithinABoundedHeapAndServiceRecovers() throws Exception {
        try (ContainerProcess c = ContainerProcess.start(ContainerProcess.EMULATED, "--name", "cap",
                "--version", "1", "--beta-ms", "250", "--alpha-ms", "0");
                GatewayChild gw = GatewayChild.start(HEAP_MB + "m", "--servegate.batching.queue-capacity=2")) {
            HttpLoad http = new HttpLoad();
            String admin = gw.adminUrl() + "/admin/";
            ok(http.post(admin + "add_model", Map.of("model_name", "cap", "model_version", "1",
                    "input_type", "floats", "batch_size", 1)));
            ok(http.post(admin + "add_container", Map.of("model_name", "cap", "model_version", "1",
                    "address", c.address())));
            for (String app : List.of("strict", "lenient")) {
                ok(http.post(admin + "add_app", Map.of("name", app, "input_type", "floats", "default_output", "-1",
                        "latency_slo_micros", SLO_MICROS, "candidate_model_names", List.of("cap"),
                        "overload_response", app.equals("strict") ? "reject" : "default")));
            }
            assertThat(http.post(admin + "get_application", Map.of("name", "strict")).body()
                    .path("overload_response").asString()).isEqualTo("reject");
            http.awaitPrediction(gw.url() + "/lenient/predict");
            // warm the JIT on both paths (answers and rejections) so that the burst measures steady overload
            http.closedLoop(gw.url() + "/strict/predict", 4, Duration.ofSeconds(3),
                    (client, i) -> Map.of("input", new float[] {client, -i, 2}));

            // open loop: one query every 25 ms, alternating apps, whatever the gateway answers
            List<CompletableFuture<Outcome>> sent = Collections.synchronizedList(new ArrayList<>());
            AtomicInteger seq = new AtomicInteger();
            AtomicLong peakHeap = new AtomicLong();
            ScheduledExecutorService ticks = Executors.newScheduledThreadPool(2);
            ticks.scheduleAtFixedRate(() -> {
                int i = seq.getAndIncrement();
                sent.add(http.postAsync(gw.url() + (i % 2 == 0 ? "/strict" : "/lenient") + "/predict",
                        Map.of("input", new float[] {i, 1, 2})));
            }, 0, 1000 / OFFERED_PER_SECOND, TimeUnit.MILLISECONDS);
            ticks.scheduleAtFixedRate(() -> {
                try {
                    peakHeap.accumulateAndGet(gw.heapUsedBytes(), Math::max);
                } catch (Exception e) {
                    // a scrape that times out under overload is simply not a sample
                }
            }, 0, 500, TimeUnit.MILLISECONDS);
            Thread.sleep(BURST.toMillis());
            long burstEnd = http.now();
            ticks.shutdown();
            ticks.awaitTermination(10, TimeUnit.SECONDS);
            List<Outcome> burst = new ArrayList<>();
            for (CompletableFuture<Outcome> f : List.copyOf(sent)) {
                burst.add(f.get(30, TimeUnit.SECONDS));
            }

            // after the burst: one client at the replica's capacity; how soon are answers predictions again?
            List<Outcome> after = http.closedLoop(gw.url() + "/lenient/predict", 1, Duration.ofSeconds(5),
                    (client, i) -> Map.of("input", new float[] {-i, 1, 2}));
            long recoveredAt = after.stream().filter(Outcome::predicted).mapToLong(Outcome::sentNanos).min()
                    .orElse(Long.MAX_VALUE);

            long rejected = HttpLoad.count(burst, o -> o.status() == 503);
            long predicted = HttpLoad.count(burst, Outcome::predicted);
            long overloadDefaults = HttpLoad.count(burst, o -> o.isDefault()
                    && (o.explanation().contains("queue") || o.explanation().contains("over capacity")));
            long otherDefaults = HttpLoad.count(burst, Outcome::isDefault) - overloadDefaults;
            long errors = HttpLoad.count(burst, o -> o.status() != 200 && o.status() != 503);
            double[] rejectMs = burst.stream().filter(o -> o.status() == 503).mapToDouble(Outcome::latencyMillis)
                    .sorted().toArray();
            System.out.printf("OVERLOAD %d offered in %d s (10x of 4/s): %d predicted, %d rejected 503 (p50 %.1f ms, "
                    + "p99 %.1f ms), %d overload defaults, %d other defaults, %d errors; peak heap %d MB of %d MB; "
                    + "predictions again %.2f s after the burst%n", burst.size(), BURST.toSeconds(), predicted,
                    rejected, pct(rejectMs, 0.5), pct(rejectMs, 0.99), overloadDefaults, otherDefaults, errors,
                    peakHeap.get() >> 20, HEAP_MB, (recoveredAt - burstEnd) / 1e9);

            assertThat(errors).as("every query is answered: 200 or an explicit 503; got "
                    + burst.stream().filter(o -> o.status() != 200 && o.status() != 503)
                            .map(o -> o.status() + " " + o.error()).distinct().limit(5).toList()).isZero();
            assertThat(rejected).as("the 'reject' app gets 503s").isPositive();
            assertThat(burst).filteredOn(o -> o.status() == 503).allSatisfy(o -> {
                assertThat(o.retryAfter()).isEqualTo("1");
                assertThat(o.body().path("error").asString()).isEqualTo("overloaded");
            });
            assertThat(overloadDefaults).as("the 'default' app gets default outputs").isPositive();
            assertThat(predicted).as("the replica keeps predicting through the burst").isPositive();
            // the tail is the shared machine's (a CPU-starved gateway and client), not the admission path's
            assertThat(pct(rejectMs, 0.5)).as("median rejection well under the SLO").isLessThan(SLO_MICROS / 2000.0);
            assertThat(gw.isAlive()).isTrue();
            assertThat(gw.logContains("OutOfMemoryError")).isFalse();
            assertThat(peakHeap.get()).as("heap samples taken").isPositive();
            assertThat(peakHeap.get()).isLessThan((long) HEAP_MB << 20);
            assertThat(recoveredAt - burstEnd).as("predictions within 5 s after the burst")
                    .isLessThan(5_000_000_000L);
            List<Outcome> settled = HttpLoad.sentBetween(after, recoveredAt + 1_000_000_000L, Long.MAX_VALUE);
            assertThat(HttpLoad.count(settled, Outcome::predicted)).as("goodput back to normal")
                    .isGreaterThanOrEqualTo(settled.size() * 9 / 10);
        }
    }

    private static double pct(double[] sorted, double q) {
        return sorted.length == 0 ? 0 : sorted[Math.min(sorted.length - 1, (int) (q * sorted.length))];
    }

    private static void ok(Outcome o) {
        assertThat(o.status()).as(String.valueOf(o.body())).isEqualTo(200);
    }
}
