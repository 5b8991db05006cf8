package io.servegate.loadgen.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class AimdReportTest {

    @Test
    void theOptimumIsTheLargestBatchWhoseServiceTimeMeetsTheSlo() {
        AimdReport.Analytic a = AimdReport.Analytic.of(5, 0.5, 20);
        assertThat(a.bStar()).isEqualTo(30);
        assertThat(a.capacityAtBStarPerSec()).isCloseTo(1500, within(1e-9));
        assertThat(AimdReport.Analytic.of(5, 0.3, 20).bStar()).isEqualTo(50);
        assertThat(AimdReport.Analytic.of(5, 0.7, 20).bStar()).isEqualTo(21);
    }

    @Test
    void batchSizeStatsCoverOnlyTheGivenSpanAndListedReplicas() {
        List<AimdReport.Sample> series = List.of(new AimdReport.Sample(-1, 1, 0), new AimdReport.Sample(4, 12, 0),
                new AimdReport.Sample(5, 28, 3), new AimdReport.Sample(6, 31, 9), new AimdReport.Sample(7, -1, -1),
                new AimdReport.Sample(9.9, 27, 1), new AimdReport.Sample(10.5, 2, 0));
        AimdReport.BatchSizeStats s = AimdReport.BatchSizeStats.of(series, 5, 10, 30);
        assertThat(s.samples()).isEqualTo(3);
        assertThat(s.mean()).isCloseTo(86 / 3.0, within(1e-9));
        assertThat(s.min()).isEqualTo(27);
        assertThat(s.max()).isEqualTo(31);
        assertThat(s.relativeError()).isCloseTo(Math.abs(86 / 3.0 - 30) / 30, within(1e-9));

        AimdReport.BatchSizeStats none = AimdReport.BatchSizeStats.of(series, 20, 30, 30);
        assertThat(none.samples()).isZero();
        assertThat(none.mean()).isNull();
    }
}
