package io.servegate.loadgen.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class GatewayMetricsTest {

    private static String scrape(long fast, long slow, long defaults, long batches, double inputs) {
        return """
                # HELP servegate_request_latency_seconds Query latency from arrival to answer
                # TYPE servegate_request_latency_seconds histogram
                servegate_request_latency_seconds_bucket{app="a",default="false",le="0.001"} %d
                servegate_request_latency_seconds_bucket{app="a",default="false",le="0.01"} %d
                servegate_request_latency_seconds_bucket{app="a",default="false",le="+Inf"} %d
                servegate_request_latency_seconds_count{app="a",default="false"} %d
                servegate_request_latency_seconds_sum{app="a",default="false"} %s
                servegate_request_latency_seconds_bucket{app="a",default="true",le="0.001"} 0
                servegate_request_latency_seconds_bucket{app="a",default="true",le="0.01"} 0
                servegate_request_latency_seconds_bucket{app="a",default="true",le="+Inf"} %d
                servegate_request_latency_seconds_count{app="a",default="true"} %d
                servegate_request_latency_seconds_sum{app="a",default="true"} %s
                servegate_batch_size_count{model="m",replica="r",version="1"} %d
                servegate_batch_size_sum{model="m",replica="r",version="1"} %s
                servegate_answers_late_total{app="a"} %d
                jvm_threads_live_threads 42.0
                """.formatted(fast, fast + slow, fast + slow, fast + slow, (fast * 0.0005 + slow * 0.005) + "",
                defaults, defaults, (defaults * 0.02) + "", batches, inputs + "", defaults / 2);
    }

    @Test
    void readsLatencyAndBatchSeriesSummedOverTags() {
        GatewayMetrics m = GatewayMetrics.parse(scrape(90, 9, 1, 50, 100));
        assertThat(m.requests()).isEqualTo(100);
        assertThat(m.batches()).isEqualTo(50);
        assertThat(m.latencyBuckets()).containsEntry(0.001, 90L).containsEntry(0.01, 99L)
                .containsEntry(Double.POSITIVE_INFINITY, 100L);
        GatewayMetrics.Summary s = m.summary();
        assertThat(s.meanMs()).isCloseTo((90 * 0.5 + 9 * 5 + 20) / 100.0, within(1e-9));
        assertThat(s.p50UpperMs()).isEqualTo(1.0);
        assertThat(s.p99UpperMs()).isEqualTo(10.0);
        assertThat(s.meanBatchSize()).isEqualTo(2.0);
        assertThat(s.lateAnswers()).isZero();
    }

    @Test
    void readsTheGatewaysOwnCountOfLateAnswers() {
        GatewayMetrics before = GatewayMetrics.parse(scrape(90, 9, 10, 50, 100));
        GatewayMetrics after = GatewayMetrics.parse(scrape(90, 9, 30, 50, 100));
        assertThat(before.lateAnswers()).isEqualTo(5);
        assertThat(after.minus(before).summary().lateAnswers()).isEqualTo(10);
    }

    @Test
    void theDifferenceOfTwoScrapesIsWhatHappenedBetweenThem() {
        GatewayMetrics before = GatewayMetrics.parse(scrape(90, 9, 1, 50, 100));
        GatewayMetrics after = GatewayMetrics.parse(scrape(100, 59, 41, 80, 250));
        GatewayMetrics.Summary s = after.minus(before).summary();
        assertThat(s.requests()).isEqualTo(100);
        assertThat(s.batches()).isEqualTo(30);
        assertThat(s.meanBatchSize()).isEqualTo(5.0);
        // 10 under 1 ms, 50 under 10 ms, 40 defaults above: the median is in the 10 ms bucket, the p99 beyond
        assertThat(s.p50UpperMs()).isEqualTo(10.0);
        assertThat(s.p99UpperMs()).isNull();
    }

    @Test
    void cpuTimeAndGcPausesAreChargedToTheQueriesOfTheLeg() {
        String gc = """
                process_cpu_time_ns_total %s
                jvm_gc_pause_seconds_count{action="end of minor GC",cause="G1 Evacuation Pause",gc="G1 Young Generation"} %d
                jvm_gc_pause_seconds_sum{action="end of minor GC",cause="G1 Evacuation Pause",gc="G1 Young Generation"} %s
                jvm_gc_pause_seconds_count{action="end of minor GC",cause="GCLocker Initiated GC",gc="G1 Young Generation"} 1
                jvm_gc_pause_seconds_sum{action="end of minor GC",cause="GCLocker Initiated GC",gc="G1 Young Generation"} 0.002
                """;
        GatewayMetrics before = GatewayMetrics.parse(scrape(90, 9, 1, 50, 100) + gc.formatted("1.5E9", 3, "0.010"));
        GatewayMetrics after = GatewayMetrics.parse(scrape(100, 59, 41, 80, 250) + gc.formatted("1.7E9", 7, "0.030"));
        GatewayMetrics.Summary s = after.minus(before).summary();
        // 0.2 s of CPU over 100 queries
        assertThat(s.cpuMsPerQuery()).isCloseTo(2.0, within(1e-9));
        assertThat(s.gcPauses()).isEqualTo(4);
        assertThat(s.gcPauseMs()).isCloseTo(20.0, within(1e-9));
    }

    @Test
    void deadlineTimersLaterThanOneTwoAndFourMillisecondsAreCountedFromTheirHistogram() {
        String lag = """
                servegate_deadline_lag_seconds_bucket{le="0.001"} %d
                servegate_deadline_lag_seconds_bucket{le="0.001048576"} %d
                servegate_deadline_lag_seconds_bucket{le="0.002097151"} %d
                servegate_deadline_lag_seconds_bucket{le="0.004194304"} %d
                servegate_deadline_lag_seconds_bucket{le="+Inf"} %d
                servegate_deadline_lag_seconds_count %d
                """;
        GatewayMetrics before = GatewayMetrics.parse(lag.formatted(100, 100, 100, 100, 100, 100));
        // 1,000 more: 900 within 1 ms, 40 more within 2.1 ms, 30 more within 4.2 ms, 30 later
        GatewayMetrics after = GatewayMetrics.parse(lag.formatted(1000, 1010, 1040, 1070, 1100, 1100));
        GatewayMetrics.Summary s = after.minus(before).summary();
        assertThat(s.deadlineTimers()).isEqualTo(1000);
        assertThat(s.deadlineTimersLate()).containsExactly(100, 60, 30);
    }

    @Test
    void anEmptyScrapeHasNoLatencies() {
        GatewayMetrics.Summary s = GatewayMetrics.parse("# nothing\n").summary();
        assertThat(s.requests()).isZero();
        assertThat(s.meanMs()).isNull();
        assertThat(s.p50UpperMs()).isNull();
        assertThat(s.meanBatchSize()).isNull();
        assertThat(s.cpuMsPerQuery()).isNull();
        assertThat(s.deadlineTimers()).isZero();
        assertThat(s.deadlineTimersLate()).containsExactly(0, 0, 0);
    }
}
