package io.servegate.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.sim.cli.ScenarioBuilder;
import io.servegate.sim.report.Summary;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** One seed, one result: the summary (less the simulator's own speed) is the same on every run. */
class DeterminismTest {

    private static Map<String, Object> summary(long seed) {
        SimResult r = Simulation.run(new ScenarioBuilder().policy(PolicyKind.SYMPHONY).replicas(3).concurrency(2)
                .linear(5, 0.5, 0.2).overheadMs(0.5).arrivals(ScenarioBuilder.Arrivals.GAMMA).cv2(4).rate(3_000)
                .models(3, 1).sloMs(20, 50).fail("m0/r1", 1.5).durationS(3).seed(seed).build());
        Map<String, Object> m = Summary.of(r);
        m.remove("sim");
        return m;
    }

    @Test
    void sameSeedSameSummary() {
        assertThat(summary(7)).isEqualTo(summary(7));
    }

    @Test
    void anotherSeedAnotherRun() {
        assertThat(summary(7).get("arrived")).isNotEqualTo(summary(8).get("arrived"));
    }
}
