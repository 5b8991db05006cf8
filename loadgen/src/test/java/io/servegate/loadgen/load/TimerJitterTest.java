package io.servegate.loadgen.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class TimerJitterTest {

    @Test
    void measuresEveryTimerItArmedOverTheWindow() throws Exception {
        TimerJitter.Result r = TimerJitter.measure(Duration.ofMillis(300), Duration.ofMillis(1), 7);
        // timers 1 to 2 ms apart for 300 ms: at most 300, and many even on a busy machine
        assertThat(r.timers()).isBetween(20L, 300L);
        assertThat(r.p50Ms()).isGreaterThanOrEqualTo(0).isLessThanOrEqualTo(r.p99Ms());
        assertThat(r.p99Ms()).isLessThanOrEqualTo(r.p999Ms());
        assertThat(r.p999Ms()).isLessThanOrEqualTo(r.maxMs() + 0.01);
        assertThat(r.over1Ms()).isGreaterThanOrEqualTo(r.over2Ms()).isLessThanOrEqualTo(r.timers());
        assertThat(r.over2Ms()).isGreaterThanOrEqualTo(r.over4Ms());
    }

    @Test
    void aChildJvmReportsItsMeasurementAsJson() throws Exception {
        TimerJitter.Child child = TimerJitter.Child.start(Duration.ofMillis(500));
        TimerJitter.Result r = child.await(Duration.ofSeconds(30));
        assertThat(r).isNotNull();
        assertThat(r.timers()).isBetween(20L, 500L);
        assertThat(r.maxMs()).isGreaterThanOrEqualTo(r.p50Ms());
    }

    @Test
    void theJsonLineRoundTrips() throws Exception {
        TimerJitter.Result r = new TimerJitter.Result(1000, 0.05, 0.8, 2.5, 9.1, 12, 3, 1);
        assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readValue(TimerJitter.toJson(r),
                TimerJitter.Result.class)).isEqualTo(r);
        assertThat(r.over2MsShare()).isEqualTo(0.003);
    }
}
