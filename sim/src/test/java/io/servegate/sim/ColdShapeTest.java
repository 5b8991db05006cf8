package io.servegate.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.sim.cli.ScenarioBuilder;
import io.servegate.sim.latency.ColdShapeLatency;
import io.servegate.sim.latency.LatencyModel;
import io.servegate.sim.latency.LinearLatency;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A replica whose first batch of each size costs 300 ms more (an accelerator autotuning each new
 * shape), every batch 10 + 1·b ms, SLO 50 ms, 400 queries/s Poisson (two thirds of the 600/s
 * optimum), profiled cold at registration: from 5 s of simulated time on, goodput is at least
 * 90 % of the same run's without the cold batches.
 */
class ColdShapeTest {

    static WindowedGoodput run(PolicyKind policy, double coldMs) {
        WindowedGoodput window = new WindowedGoodput();
        Simulation.run(new ScenarioBuilder().policy(policy).linear(10, 1, 0).coldBatchMs(coldMs).sloMs(50).rate(400)
                .overheadMs(0.5).durationS(15).seed(7).build(), window);
        return window;
    }

    @Test
    void goodputRecoversWithinFiveSecondsOfColdShapes() {
        for (PolicyKind policy : List.of(PolicyKind.SYMPHONY, PolicyKind.CLIPPER)) {
            double control = run(policy, 0).goodFraction(5, 15);
            double cold = run(policy, 300).goodFraction(5, 15);
            assertThat(control).as("%s without cold batches", policy).isGreaterThan(0.9);
            assertThat(cold).as("%s with cold batches", policy).isGreaterThanOrEqualTo(0.9 * control);
        }
    }

    @Test
    void eachReplicaIsColdOnItsOwn() {
        ColdShapeLatency shared = new ColdShapeLatency(new LinearLatency(10, 1, 0), 300);
        LatencyModel a = shared.forReplica();
        LatencyModel b = shared.forReplica();
        assertThat(a.serviceNanos(2, null)).isEqualTo(312);
        assertThat(a.serviceNanos(2, null)).isEqualTo(12);
        assertThat(b.serviceNanos(2, null)).isEqualTo(312);
    }
}
