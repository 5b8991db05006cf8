package io.servegate.loadgen.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class LatencyRecorderTest {

    @Test
    void summarisesPercentilesInMillisecondsToThreeDigits() {
        LatencyRecorder recorder = new LatencyRecorder();
        // 1..1000 ms, recorded from several threads at once
        IntStream.rangeClosed(1, 1000).parallel().forEach(ms -> recorder.record(ms * 1_000_000L));
        recorder.recordError(new IllegalStateException("boom"));
        LatencyRecorder.Snapshot s = recorder.snapshot();
        LatencySummary l = LatencySummary.of(s.histogram());

        assertThat(l.count()).isEqualTo(1000);
        assertThat(l.p50Ms()).isCloseTo(500, within(0.5));
        assertThat(l.p90Ms()).isCloseTo(900, within(0.9));
        assertThat(l.p99Ms()).isCloseTo(990, within(1.0));
        assertThat(l.p999Ms()).isCloseTo(999, within(1.0));
        assertThat(l.maxMs()).isCloseTo(1000, within(1.0));
        assertThat(l.meanMs()).isCloseTo(500.5, within(0.5));
        assertThat(s.errors()).isEqualTo(1);
        assertThat(s.firstError()).hasMessage("boom");
    }

    @Test
    void emptyHistogramHasNoSummary() {
        assertThat(LatencySummary.of(new LatencyRecorder().snapshot().histogram())).isNull();
    }
}
