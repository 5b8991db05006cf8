package io.servegate.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.sim.cli.ScenarioBuilder;
import org.junit.jupiter.api.Test;

/**
 * The load sweep on an accelerator-like replica: β 3.4 ms, α 0.05 ms, plus 0.05 ms per input to
 * move 150,528 bytes (a 224×224×3 image) at 3 GB/s, so ℓ(b) = 3.4 + 0.1002·b ms; batches up to 32,
 * SLO 50 ms, 0.5 ms transport, Poisson. Its capacity is 32/ℓ(32) = 4,844 queries/s. The default
 * policy answers at least 95 % of the offered load in time at 0.5× and 0.9× of it, and at least
 * 85 % of the capacity at 2× and 4×.
 */
class EmulatedLoadSweepTest {

    static final double ALPHA_MS = 0.05 + 150_528 / 3_000_000.0;
    static final double CAPACITY = 32 / ((3.4 + ALPHA_MS * 32) / 1e3);

    private static SimResult run(double load) {
        return Simulation.run(new ScenarioBuilder().policy(PolicyKind.ADAPTIVE).linear(3.4, ALPHA_MS, 0).sloMs(50)
                .batchSizes(-1, 32).profileMax(32).overheadMs(0.5).rate(load * CAPACITY).durationS(10).seed(3).build());
    }

    @Test
    void theDefaultServesTheOfferedLoadBelowCapacityAndNearlyAllOfItAbove() {
        for (double load : new double[] {0.5, 0.9}) {
            SimResult r = run(load);
            assertThat(r.goodputRps()).as("%s× capacity", load).isGreaterThanOrEqualTo(0.95 * r.offeredRps());
        }
        for (double load : new double[] {2, 4}) {
            assertThat(run(load).goodputRps()).as("%s× capacity", load).isGreaterThanOrEqualTo(0.85 * CAPACITY);
        }
    }
}
