package io.servegate.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.sim.cli.ScenarioBuilder;
import io.servegate.sim.latency.ColdShapeLatency;
import io.servegate.sim.latency.LatencyModel;
import io.servegate.sim.latency.LinearLatency;
import org.junit.jupiter.api.Test;

/**
 * The default policy holds at every load: one replica, 10 + 1·b ms, SLO 50 ms (600/s optimum),
 * 0.5 ms transport, Poisson at 0.5×, 0.9×, 2× and 4× of it, with and without a first batch of
 * each size 300 ms slower. At each, {@code adaptive}'s goodput is within 1 % of the better of
 * {@code clipper} and {@code symphony} or above it.
 */
class DefaultPolicySweepTest {

    private static double goodput(PolicyKind policy, double rate, double coldMs) {
        return Simulation.run(new ScenarioBuilder().policy(policy).linear(10, 1, 0).coldBatchMs(coldMs).sloMs(50)
                .rate(rate).overheadMs(0.5).durationS(20).seed(11).build()).goodputRps();
    }

    @Test
    void adaptiveIsAtLeastTheBetterOfClipperAndSymphonyAtEveryLoad() {
        for (double coldMs : new double[] {0, 300}) {
            for (double load : new double[] {0.5, 0.9, 2, 4}) {
                double rate = 600 * load;
                double best = Math.max(goodput(PolicyKind.CLIPPER, rate, coldMs), goodput(PolicyKind.SYMPHONY, rate, coldMs));
                assertThat(goodput(PolicyKind.ADAPTIVE, rate, coldMs)).as("%s/s, cold %s ms", rate, coldMs)
                        .isGreaterThanOrEqualTo(0.99 * best);
            }
        }
    }

    @Test
    void belowCapacityItSendsAtOnceAndAboveItDefersAsSymphony() {
        SimResult low = Simulation.run(new ScenarioBuilder().policy(PolicyKind.ADAPTIVE).linear(10, 1, 0).sloMs(50)
                .rate(300).overheadMs(0.5).durationS(10).seed(11).build());
        SimResult symphony = Simulation.run(new ScenarioBuilder().policy(PolicyKind.SYMPHONY).linear(10, 1, 0).sloMs(50)
                .rate(300).overheadMs(0.5).durationS(10).seed(11).build());
        // work-conserving: smaller batches, answered sooner, than deferring to sched_at
        assertThat(low.total().latencyMs(50)).isLessThan(symphony.total().latencyMs(50));
        assertThat(low.total().meanBatchSize()).isLessThan(symphony.total().meanBatchSize());
    }
}
