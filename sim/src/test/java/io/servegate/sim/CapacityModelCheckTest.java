package io.servegate.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.autoscaling.CapacityModel;
import io.servegate.core.scheduling.PolicyKind;
import io.servegate.sim.cli.ScenarioBuilder;
import io.servegate.sim.report.Table4;
import org.junit.jupiter.api.Test;

/** The capacity model's closed forms against the simulator running the same core. */
class CapacityModelCheckTest {

    @Test
    void unbatchedReplicasQueueAsMdcPredicts() {
        CapacityModel model = new CapacityModel(b -> 2_000_000L * b, 10_000_000_000L, 1);
        for (int c : new int[] {1, 2, 4}) {
            for (double rho : new double[] {0.5, 0.8}) {
                double rate = rho * c * 500;
                SimResult r = Simulation.run(new ScenarioBuilder().policy(PolicyKind.CLIPPER).replicas(c)
                        .linear(2, 0, 0).overheadMs(0).sloMs(10_000).batchSizes(1, 1).rate(rate).durationS(200)
                        .seed(11).build());
                double simulated = r.total().latency.getMean();
                double predicted = model.unbatchedMeanLatencyNanos(rate, c);
                assertThat(Math.abs(simulated - predicted) / simulated)
                        .as("c = %d, rho = %.1f: simulated %.3f ms, M/D/c %.3f ms", c, rho, simulated / 1e6, predicted / 1e6)
                        .isLessThan(0.05);
            }
        }
    }

    @Test
    void staggeredCapacityIsWhatTheSchedulerDelivers() {
        // Symphony's Table 4 row on the simulator: 8 replicas offered the model's capacity
        CapacityModel model = new CapacityModel(b -> Math.round((Table4.BETA_MS + Table4.ALPHA_MS * b) * 1e6),
                Math.round(Table4.SLO_MS * 1e6), 256);
        SimResult r = Simulation.run(Table4.staggered(PolicyKind.SYMPHONY, ScenarioBuilder.Arrivals.POISSON, 1).build());
        assertThat(r.goodputRps() / model.capacity(8)).isBetween(0.9, 1.0);
    }
}
