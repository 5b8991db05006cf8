package io.servegate.gateway.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.assertj.core.api.Assertions.withinPercentage;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The Clipper-shaped report from a Prometheus meter registry (the gateway's), with the meters'
 * 5 s ticks on virtual time.
 */
class ClipperMetricsTest {

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final VirtualTimeScheduler time = VirtualTimeScheduler.create();
    private final ClipperMetrics metrics = new ClipperMetrics(registry, () -> time.now(TimeUnit.NANOSECONDS), time);

    @AfterEach
    void close() {
        metrics.close();
    }

    private Timer latency(String app, boolean isDefault) {
        // as the gateway's application.yml configures it: with a percentile histogram
        return Timer.builder("servegate.request.latency").tag("app", app).tag("default", Boolean.toString(isDefault))
                .publishPercentileHistogram().register(registry);
    }

    private DistributionSummary batchSize(String replica) {
        return DistributionSummary.builder("servegate.batch.size").tag("model", "m").tag("version", "1")
                .tag("replica", replica).register(registry);
    }

    @Test
    void appLatencyDefaultsAndCacheInClippersNamesAndFields() {
        Timer predictions = latency("a", false);
        for (int ms = 1; ms <= 100; ms++) {
            predictions.record(Duration.ofMillis(ms));
        }
        Timer defaults = latency("a", true);
        for (int i = 0; i < 25; i++) {
            defaults.record(Duration.ofMillis(100));
        }
        Counter.builder("servegate.cache.requests").tag("result", "hit").register(registry).increment(1);
        Counter.builder("servegate.cache.requests").tag("result", "miss").register(registry).increment(3);

        Map<String, List<Map<String, Object>>> report = metrics.report();
        assertThat(report).containsOnlyKeys("counters", "ratio_counters", "meters", "histograms");
        assertThat(field(report, "counters", "app:a:num_predictions", "count")).isEqualTo(125L);
        assertThat(field(report, "ratio_counters", "app:a:default_prediction_ratio", "ratio")).isEqualTo(0.2);
        assertThat(field(report, "ratio_counters", "internal:prediction_cache_hit_ratio", "ratio")).isEqualTo(0.25);

        Map<String, Object> h = fields(report, "histograms", "app:a:prediction_latency");
        assertThat(h).containsEntry("unit", "microseconds").containsEntry("size", 125L);
        // 100 answers of 1..100 ms and 25 of 100 ms
        assertThat((double) h.get("mean")).isCloseTo((5050 + 2500) * 1000.0 / 125, within(1.0));
        assertThat((double) h.get("max")).isEqualTo(100_000.0);
        // estimated within the histogram's buckets (about 25 % wide here)
        assertThat((double) h.get("p50")).isCloseTo(63_000, withinPercentage(25));
        assertThat((double) h.get("p99")).isCloseTo(100_000, withinPercentage(25));
        assertThat((double) h.get("p50")).isLessThan((double) h.get("p95"));
        assertThat((double) h.get("min")).isNaN();
        assertThat((double) h.get("std_dev")).isNaN();
    }

    @Test
    void modelCountsAndBatchSizesAddUpOverReplicasAndUnknownsAreNaN() {
        batchSize("r1").record(2);
        batchSize("r1").record(4);
        batchSize("r2").record(6);

        Map<String, List<Map<String, Object>>> report = metrics.report();
        assertThat(field(report, "counters", "model:m:1:num_predictions", "count")).isEqualTo(12L);
        assertThat(field(report, "counters", "internal:aggregate_num_predictions", "count")).isEqualTo(12L);
        Map<String, Object> h = fields(report, "histograms", "model:m:1:batch_size");
        assertThat(h).containsEntry("unit", "queries").containsEntry("size", 3L).containsEntry("mean", 4.0)
                .containsEntry("max", 6.0);
        // the batch size summary publishes no buckets, so there is nothing to estimate percentiles from
        assertThat((double) h.get("p50")).isNaN();
        // nothing answered yet: Clipper's ratio of 0/0
        assertThat(field(report, "ratio_counters", "internal:prediction_cache_hit_ratio", "ratio"))
                .isEqualTo(Double.NaN);
    }

    @Test
    void metersTickEveryFiveSecondsIntoMovingAveragesAndNeverGoNegative() {
        Timer predictions = latency("a", false);
        DistributionSummary r2 = batchSize("r2");
        for (int i = 0; i < 50; i++) {
            predictions.record(Duration.ofMillis(1));
            r2.record(1);
        }
        assertThat(field(metrics.report(), "meters", "app:a:prediction_throughput", "rate_1min")).isEqualTo(0.0);

        time.advanceTimeBy(Duration.ofSeconds(5));
        Map<String, Object> m = fields(metrics.report(), "meters", "app:a:prediction_throughput");
        assertThat(m).containsEntry("unit", "events per second");
        // the first tick sets each average to the rate over its interval: 50 in 5 s
        assertThat((double) m.get("rate_1min")).isCloseTo(10.0, within(1e-9));
        assertThat((double) m.get("rate_15min")).isCloseTo(10.0, within(1e-9));
        assertThat((double) m.get("rate")).isCloseTo(10.0, within(1e-9));

        time.advanceTimeBy(Duration.ofSeconds(5));
        m = fields(metrics.report(), "meters", "app:a:prediction_throughput");
        // a quiet interval: the 1 minute average decays by exp(-5/60), the 15 minute one by exp(-5/900)
        assertThat((double) m.get("rate_1min")).isCloseTo(10.0 * Math.exp(-5.0 / 60), within(1e-9));
        assertThat((double) m.get("rate_15min")).isCloseTo(10.0 * Math.exp(-5.0 / 900), within(1e-9));
        assertThat((double) m.get("rate")).isCloseTo(5.0, within(1e-9));

        // a replica goes away with its batch sizes: the model's count drops, its rates stay >= 0
        registry.remove(r2);
        batchSize("r3").record(1);
        time.advanceTimeBy(Duration.ofSeconds(5));
        Map<String, Object> model = fields(metrics.report(), "meters", "model:m:1:prediction_throughput");
        assertThat((double) model.get("rate_1min")).isGreaterThanOrEqualTo(0.0);
        assertThat(field(metrics.report(), "counters", "model:m:1:num_predictions", "count")).isEqualTo(1L);
    }

    @Test
    void closingStopsTheTicks() {
        Timer predictions = latency("a", false);
        metrics.close();
        predictions.record(Duration.ofMillis(1));
        time.advanceTimeBy(Duration.ofSeconds(5));
        assertThat(field(metrics.report(), "meters", "app:a:prediction_throughput", "rate_1min")).isEqualTo(0.0);
    }

    private static Object field(Map<String, List<Map<String, Object>>> report, String category, String name,
            String field) {
        return fields(report, category, name).get(field);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> fields(Map<String, List<Map<String, Object>>> report, String category,
            String name) {
        return report.get(category).stream().filter(e -> e.containsKey(name)).findFirst()
                .map(e -> (Map<String, Object>) e.get(name))
                .orElseThrow(() -> new AssertionError("no " + name + " in " + report.get(category)));
    }
}
