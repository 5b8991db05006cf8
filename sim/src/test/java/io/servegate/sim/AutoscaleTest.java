package io.servegate.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.autoscaling.AutoscalerConfig;
import io.servegate.core.autoscaling.ScalingDecision;
import io.servegate.core.autoscaling.ScalingReason;
import io.servegate.core.scheduling.PolicyKind;
import io.servegate.sim.cli.ScenarioBuilder;
import io.servegate.sim.workload.ScalingWorkloads;
import io.servegate.workload.arrival.RateTrace;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The core's autoscaler driven by the simulator, in virtual time. */
class AutoscaleTest {

    private static final long S = 1_000_000_000L;

    private static SimResult run(RateTrace trace, int maxReplicas, long seed) {
        return Simulation.run(new ScenarioBuilder().policy(PolicyKind.SYMPHONY).linear(5, 0.5, 0).overheadMs(1)
                .sloMs(50).trace(trace).rate(trace.meanRate()).durationS(trace.durationNanos() / 1e9).seed(seed)
                .replicas(1).autoscaling(new Autoscaling(AutoscalerConfig.of(1, maxReplicas), 2 * S, S)).build());
    }

    @Test
    void aStepUpIsFollowedAtOnceAndAStepDownAfterTheCooldown() {
        RateTrace steps = ScalingWorkloads.steps(new double[] {200, 3000, 200}, new int[] {30, 30, 90});
        SimResult r = run(steps, 8, 3);
        ScalingTrace trace = r.models().get(0).stats().scaling();
        List<ScalingDecision> d = trace.decisions();

        ScalingDecision up = d.get(0);
        assertThat(up.reason()).isEqualTo(ScalingReason.ENVELOPE);
        assertThat(up.atNanos()).isBetween(30 * S, 32 * S); // the tick after the step
        assertThat(up.to()).isEqualTo(2); // doubled...
        assertThat(d.get(1).atNanos()).isBetween(31 * S, 33 * S);
        assertThat(d.get(1).to()).isEqualTo(3); // ...to what the capacity model needs: 3 carry 3,780/s at 75 %
        ScalingDecision firstDown = d.stream().filter(x -> !x.up()).findFirst().orElseThrow();
        assertThat(firstDown.reason()).isEqualTo(ScalingReason.IDLE);
        assertThat(firstDown.atNanos()).isBetween(61 * S, 75 * S); // within the 15 s cooldown of the drop
        assertThat(d.get(d.size() - 1).to()).isEqualTo(1);
        assertThat(d).allSatisfy(x -> assertThat(x.to()).isBetween(1, 8));

        double good = (double) r.total().good() / r.total().arrived();
        assertThat(good).isGreaterThan(0.95);
        // 3 replicas for the whole run would be 450 replica-seconds
        assertThat(trace.replicaSeconds()).isLessThan(0.6 * 450);
    }

    @Test
    void theSameSeedGivesTheSameDecisions() {
        RateTrace day = ScalingWorkloads.day(4000, 300, 5);
        List<String> a = run(day, 16, 9).models().get(0).stats().scaling().decisions().stream()
                .map(ScalingDecision::toString).toList();
        List<String> b = run(day, 16, 9).models().get(0).stats().scaling().decisions().stream()
                .map(ScalingDecision::toString).toList();
        assertThat(a).isNotEmpty().isEqualTo(b);
    }

    @Test
    void maxReplicasCapsTheScaleUp() {
        RateTrace steps = ScalingWorkloads.steps(new double[] {200, 6000}, new int[] {10, 20});
        SimResult r = run(steps, 2, 1);
        ScalingTrace trace = r.models().get(0).stats().scaling();
        assertThat(trace.peakReplicas()).isEqualTo(2);
        assertThat(trace.samples()).allSatisfy(s -> assertThat(s.replicas()).isLessThanOrEqualTo(2));
    }
}
