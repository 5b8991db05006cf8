package io.servegate.loadgen.harness;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class PrometheusTextTest {

    private static final String SCRAPE = """
            # HELP servegate_defaults_total Queries answered with the app's default output
            # TYPE servegate_defaults_total counter
            servegate_defaults_total{app="r1-2x",reason="infeasible"} 12.0
            servegate_defaults_total{app="r1-2x",reason="deadline"} 3.0
            servegate_defaults_total{app="r1-4x",reason="deadline"} 40.0
            servegate_replica_idle_fraction{model="r8-table4",replica="r8-table4-1-0",version="1"} 0.25
            servegate_replica_idle_fraction{model="r8-table4",replica="r8-table4-1-1",version="1"} 0.5
            servegate_batch_size_sum{model="r1-2x",replica="a",version="1"} 150.0
            servegate_batch_size_sum{model="r1-2x",replica="b",version="1"} 50.0
            process_cpu_time_ns_total 1.5E9
            servegate_odd{app="x\\"y",reason="a,b"} NaN
            """;

    @Test
    void selectsSamplesByOneLabelAndSumsThem() {
        PrometheusText t = PrometheusText.parse(SCRAPE);
        assertThat(t.sumBy("servegate_defaults_total", "app", "r1-2x", "reason"))
                .isEqualTo(Map.of("deadline", 3.0, "infeasible", 12.0));
        assertThat(t.sum("servegate_batch_size_sum", "model", "r1-2x")).isEqualTo(200.0);
        assertThat(t.where("servegate_replica_idle_fraction", "model", "r8-table4"))
                .extracting(PrometheusText.Sample::value).containsExactly(0.25, 0.5);
        assertThat(t.sum("servegate_batch_size_sum", "model", "none")).isZero();
        assertThat(t.where("servegate_odd", "reason", "a,b")).hasSize(1);
        assertThat(PrometheusText.parse(null).sum("process_cpu_time_ns_total", "app", "x")).isZero();
    }
}
