package io.servegate.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.sim.cli.ScenarioBuilder;
import io.servegate.sim.latency.LinearLatency;
import io.servegate.sim.latency.StallingLatency;
import org.junit.jupiter.api.Test;

/**
 * A replica that stands still 200 ms every 5 s, every batch 10 + 1·b ms, SLO 50 ms, 400
 * queries/s Poisson (two thirds of the 600/s optimum), default policy: the queries arriving
 * around a stall miss, and in each second from one second after a stall to the next, goodput is at
 * least 90 % of the same run's without stalls.
 */
class StallTest {

    private static final PolicyKind DEFAULT = PolicyKind.ADAPTIVE;

    static WindowedGoodput run(double stallMs) {
        WindowedGoodput window = new WindowedGoodput();
        Simulation.run(new ScenarioBuilder().policy(DEFAULT).linear(10, 1, 0).stalls(stallMs, 5_000).sloMs(50)
                .rate(400).overheadMs(0.5).durationS(20).seed(7).build(), window);
        return window;
    }

    @Test
    void goodputRecoversWithinASecondOfEachStall() {
        WindowedGoodput control = run(0);
        WindowedGoodput stalled = run(200);
        for (int stallAt = 5; stallAt < 20; stallAt += 5) {
            assertThat(stalled.goodFraction(stallAt, stallAt + 1)).as("the second of the stall at %d s", stallAt)
                    .isLessThan(0.9 * control.goodFraction(stallAt, stallAt + 1));
            for (int s = stallAt + 1; s < stallAt + 5; s++) {
                assertThat(stalled.goodFraction(s, s + 1)).as("second %d, after the stall at %d s", s, stallAt)
                        .isGreaterThanOrEqualTo(0.9 * control.goodFraction(s, s + 1));
            }
        }
        assertThat(stalled.goodFraction(0, 20)).as("the whole run").isGreaterThanOrEqualTo(0.9 * control.goodFraction(0, 20));
    }

    @Test
    void aBatchRunningOrStartingDuringAStallWaitsForItsEnd() {
        long ms = 1_000_000L;
        StallingLatency stalls = new StallingLatency(new LinearLatency(10 * ms, ms, 0), 5_000 * ms, 200 * ms);
        assertThat(stalls.finishNanos(1_000 * ms, 12 * ms)).isEqualTo(1_012 * ms);
        assertThat(stalls.finishNanos(4_990 * ms, 20 * ms)).as("in flight when it begins").isEqualTo(5_210 * ms);
        assertThat(stalls.finishNanos(5_050 * ms, 12 * ms)).as("starting during it").isEqualTo(5_212 * ms);
        assertThat(stalls.finishNanos(5_200 * ms, 12 * ms)).as("starting as it ends").isEqualTo(5_212 * ms);
        assertThat(stalls.finishNanos(4_000 * ms, 6_500 * ms)).as("through two").isEqualTo(10_900 * ms);
    }
}
