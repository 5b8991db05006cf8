package io.servegate.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.sim.cli.ScenarioBuilder;
import org.junit.jupiter.api.Test;

/**
 * One replica, β 5 ms, α 0.5 ms, SLO 20 ms, 0.5 ms transport overhead, Poisson arrivals: the
 * best policy holds a flat top at ≥ 90 % of the analytic optimum from capacity (1,000/s) to 5×.
 */
class OneReplicaTest {

    private static SimResult run(PolicyKind policy, double rate) {
        return Simulation.run(new ScenarioBuilder().policy(policy).rate(rate).overheadMs(0.5).durationS(10).seed(3)
                .build());
    }

    @Test
    void analyticOptimumIsIssue12s() {
        ScenarioBuilder b = new ScenarioBuilder();
        assertThat(b.analyticOneReplicaOptimum(800)).isEqualTo(800);
        assertThat(b.analyticOneReplicaOptimum(1_000)).isEqualTo(1_000);
        assertThat(b.analyticOneReplicaOptimum(2_000)).isCloseTo(1_200, org.assertj.core.data.Offset.offset(1.0));
        assertThat(b.analyticOneReplicaOptimum(4_000)).isCloseTo(1_333, org.assertj.core.data.Offset.offset(1.0));
    }

    @Test
    void symphonyHoldsAFlatTopAtNinetyPercentOfTheOptimum() {
        ScenarioBuilder analytic = new ScenarioBuilder();
        for (double load : new double[] {1, 2, 3, 4, 5}) {
            double rate = 1_000 * load;
            SimResult r = run(PolicyKind.SYMPHONY, rate);
            assertThat(r.goodputRps()).as("goodput at %s/s", rate)
                    .isGreaterThanOrEqualTo(0.9 * analytic.analyticOneReplicaOptimum(r.offeredRps()));
            assertThat(r.total().late()).isZero();
        }
    }

    @Test
    void belowCapacityNearlyEverythingIsAnsweredInTime() {
        SimResult r = run(PolicyKind.SYMPHONY, 200);
        assertThat(r.goodputRps()).isGreaterThan(0.99 * r.offeredRps());
    }
}
