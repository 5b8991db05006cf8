package io.servegate.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.sim.cli.ScenarioBuilder;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * Every batch 10 + 1·b ms times lognormal jitter exp(σZ − σ²/2) of σ 0.3 (mean unchanged, the
 * {@code emulated} container's {@code --jitter-sigma}), SLO 50 ms, 0.5 ms transport, 402
 * queries/s Poisson (0.67× the 600/s optimum), 30 s, seeds 1 to 5, default policy. Losses cluster
 * around the long batches, so one seed says little: seed 1 answers 94 % in time, seed 2 91 %.
 * Without jitter the plan is the exact one.
 */
class JitterTest {

    static SimResult run(double sigma, long seed) {
        return Simulation.run(new ScenarioBuilder().policy(PolicyKind.ADAPTIVE).linear(10, 1, sigma).sloMs(50)
                .rate(0.67 * 600).overheadMs(0.5).durationS(30).seed(seed).build());
    }

    private static SimResult[] jittered() {
        return LongStream.rangeClosed(1, 5).mapToObj(seed -> run(0.3, seed)).toArray(SimResult[]::new);
    }

    /**
     * Planned on the median, 3.8 % of seed 1's queries were answered after their SLO; planned on the
     * upper quartile, fewer than 3.5 % of the five seeds' are.
     */
    @Test
    void plansHoldUnderJitter() {
        long late = 0;
        long arrived = 0;
        for (SimResult r : jittered()) {
            late += r.total().late();
            arrived += r.total().arrived();
        }
        assertThat((double) late / arrived).as("answered late").isLessThan(0.035);
    }

    /**
     * At 0.67× the default sends at once, as without jitter. When it judged its capacity on the
     * upper-quartile plan, 0.67× looked like 0.8× and it deferred batches to grow them: the replica
     * idled 9.6 % of the time waiting for them and 92.6 % were answered in time; judged on the
     * median it idles 4.2 % and answers 93.4 %.
     */
    @Test
    void jitterBelowCapacityStaysWorkConserving() {
        double idle = 0;
        double goodput = 0;
        SimResult[] runs = jittered();
        for (SimResult r : runs) {
            idle += r.meanIdleFraction() / runs.length;
            goodput += r.goodputRps() / r.offeredRps() / runs.length;
        }
        assertThat(idle).as("replica idle").isLessThan(0.06);
        assertThat(goodput).as("goodput").isGreaterThan(0.93);
    }

    @Test
    void steadyBatchesLoseNothing() {
        SimResult exact = run(0, 1);
        assertThat(exact.total().late()).as("answered late").isZero();
        assertThat(exact.goodputRps() / exact.offeredRps()).as("goodput").isGreaterThanOrEqualTo(0.995);
    }
}
