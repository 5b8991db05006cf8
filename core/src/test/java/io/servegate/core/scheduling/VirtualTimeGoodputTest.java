package io.servegate.core.scheduling;

import static io.servegate.core.scheduling.VirtualCluster.MS;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Goodput of the policies in virtual time with exact emulated containers (β 5 ms, α 0.5 ms,
 * 0.5 ms transport overhead, SLO 20 ms), against the analytic optima of issue 12 (Symphony
 * §5.2.2): deterministic for the seed, so these are behaviour checks, not timings.
 */
class VirtualTimeGoodputTest {

    private static final long SLO = 20 * MS;
    private static final long SECONDS = 10;

    private static VirtualCluster<ModelScheduler<Integer>> oneReplica(PolicyKind policy, double rate) {
        var c = VirtualCluster.of(SchedulerConfig.of(policy, SLO), 5)
                .replica("a", 5 * MS, MS / 2, MS / 2).profiled("a", 64)
                .poisson(rate, SECONDS * 1_000 * MS, SLO);
        c.drain();
        return c;
    }

    private static double goodput(VirtualCluster<?> c) {
        return c.good() / (double) SECONDS;
    }

    /** Freshest-first optimum for one replica at rate λ: the largest b with λ·(SLO − ℓ(b)) ≥ b, at b / ℓ(b). */
    private static double overloadOptimum(double rate) {
        int b = 1;
        while (rate * (15_000 - 500 * (b + 1)) / 1e6 >= b + 1) { // microseconds: exact for these rates
            b++;
        }
        return b / (0.005 + 0.0005 * b);
    }

    @Test
    void symphonyAnswersNearlyEverythingInTimeAtEightTenthsOfCapacity() {
        var c = oneReplica(PolicyKind.SYMPHONY, 800);
        assertThat(goodput(c)).isGreaterThan(0.95 * 800);
        assertThat(c.late()).isZero();
    }

    @Test
    void symphonyHoldsAFlatTopAtTwiceAndFourTimesCapacity() {
        assertThat(overloadOptimum(2_000)).isCloseTo(1_200, org.assertj.core.data.Offset.offset(1.0));
        assertThat(overloadOptimum(4_000)).isCloseTo(1_333, org.assertj.core.data.Offset.offset(1.0));
        for (double rate : new double[] {2_000, 4_000}) {
            var c = oneReplica(PolicyKind.SYMPHONY, rate);
            assertThat(goodput(c)).as("goodput at %s/s", rate).isGreaterThan(0.9 * overloadOptimum(rate));
            assertThat(c.meanBatchSize()).as("batches under overload").isGreaterThan(12);
        }
    }

    @Test
    void clockworkAndClipperCollapseUnderOverloadWhereSymphonyDoesNot() {
        double symphony = goodput(oneReplica(PolicyKind.SYMPHONY, 4_000));
        assertThat(goodput(oneReplica(PolicyKind.CLOCKWORK, 4_000))).isLessThan(0.5 * symphony);
        assertThat(goodput(oneReplica(PolicyKind.CLIPPER, 4_000))).isLessThan(0.1 * symphony);
    }

    @Test
    void symphonyStaggersEightReplicasNearTheAnalyticOptimumOfTable4() {
        // ResNet50 row of Symphony's Table 4: α 1.053 ms, β 5.072 ms, SLO 25 ms, 8 replicas, Poisson
        var c = VirtualCluster.of(SchedulerConfig.of(PolicyKind.SYMPHONY, 25 * MS), 5);
        for (int i = 0; i < 8; i++) {
            c.replica("r" + i, 5_072_000, 1_053_000, MS / 2).profiled("r" + i, 64);
        }
        c.poisson(5_839, SECONDS * 1_000 * MS, 25 * MS).drain();
        assertThat(goodput(c)).isGreaterThan(0.9 * 5_839);
        assertThat(c.meanBatchSize()).as("staggered batch size (analytic 16)").isBetween(13.0, 17.0);
    }

    @Test
    void burstyGammaArrivalsAtEightTenthsOfCapacity() {
        var c = VirtualCluster.of(SchedulerConfig.of(PolicyKind.SYMPHONY, SLO), 5)
                .replica("a", 5 * MS, MS / 2, MS / 2).profiled("a", 64)
                .gamma(800, 4, SECONDS * 1_000 * MS, SLO);
        c.drain();
        assertThat(c.good()).isGreaterThan((int) (0.85 * c.submitted()));
        assertThat(c.late()).isZero();
    }

    @Test
    void withLateTimersAndNoisyContainersTheSafetyMarginKeepsAnswersInTime() {
        int[] late = new int[2];
        long[] margins = {0, MS};
        for (int i = 0; i < 2; i++) {
            var c = VirtualCluster.of(SchedulerConfig.of(PolicyKind.SYMPHONY, SLO)
                    .withSafetyMargin(margins[i]), 5).replica("a", 5 * MS, MS / 2, 3 * MS).profiled("a", 32);
            c.timerJitter = MS / 2;
            c.serviceJitter = MS / 2;
            c.poisson(800, SECONDS * 1_000 * MS, SLO).drain();
            late[i] = c.late();
            assertThat(c.good()).isGreaterThan((int) (0.75 * c.submitted()));
        }
        assertThat(late[0]).as("late answers without a margin").isPositive();
        assertThat(late[1]).as("late answers with a 1 ms margin").isZero();
    }
}
