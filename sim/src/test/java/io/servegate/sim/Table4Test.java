package io.servegate.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.sim.cli.ScenarioBuilder;
import io.servegate.sim.report.Analytic;
import io.servegate.sim.report.Table4;
import org.junit.jupiter.api.Test;

/**
 * Symphony's Table 4 (ResNet50 row: 8 replicas, α 1.053 ms, β 5.072 ms, SLO 25 ms) reproduced in
 * virtual time on uniform arrivals at the analytic throughput, within 5 %.
 */
class Table4Test {

    static final double ALPHA = 1.053;
    static final double BETA = 5.072;
    static final double SLO = 25;

    @Test
    void analyticRowsAreThePapers() {
        assertThat(Analytic.uncoordinatedBatch(SLO, BETA, ALPHA)).isEqualTo(7);
        assertThat(Analytic.staggeredBatch(SLO, BETA, ALPHA, 8)).isEqualTo(16);
        assertThat(Analytic.throughput(7, BETA, ALPHA, 8)).isCloseTo(4_501, org.assertj.core.data.Offset.offset(1.0));
        assertThat(Analytic.throughput(16, BETA, ALPHA, 8)).isCloseTo(5_839, org.assertj.core.data.Offset.offset(1.0));
    }

    @Test
    void staggeredExecutionWithSymphony() {
        SimResult r = Simulation.run(Table4.staggered(PolicyKind.SYMPHONY, ScenarioBuilder.Arrivals.UNIFORM, 1).build());
        assertThat(r.goodputRps()).isCloseTo(5_839, org.assertj.core.data.Percentage.withPercentage(5));
        assertThat(r.total().meanBatchSize()).isCloseTo(16, org.assertj.core.data.Percentage.withPercentage(5));
    }

    @Test
    void noCoordination() {
        SimResult r = Simulation.run(Table4.uncoordinated(ScenarioBuilder.Arrivals.UNIFORM, 1).build());
        assertThat(r.goodputRps()).isCloseTo(4_501, org.assertj.core.data.Percentage.withPercentage(5));
        assertThat(r.total().meanBatchSize()).isCloseTo(7, org.assertj.core.data.Percentage.withPercentage(5));
    }
}
