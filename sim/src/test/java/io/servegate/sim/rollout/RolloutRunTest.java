package io.servegate.sim.rollout;

import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.core.rollout.Guards;
import io.servegate.core.rollout.Rollout;
import io.servegate.core.rollout.RolloutMode;
import io.servegate.core.rollout.RolloutStatus;
import io.servegate.core.selection.Task;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The simulator criteria: 1000 queries/s, 20 000 users, 100 ms SLO, half the queries labelled 5 s later. */
class RolloutRunTest {

    private static final SimVersion BASELINE = new SimVersion(0.9, 10, 10);

    private static RolloutOutcome run(SimVersion candidate, long seed) {
        return run(candidate, Guards.DEFAULTS, seed);
    }

    private static RolloutOutcome run(SimVersion candidate, Guards guards, long seed) {
        RolloutRun run = new RolloutRun(BASELINE, candidate, 1000, 20_000, 100, 5_000, 0.5, seed);
        Rollout r = Rollout.start("r" + seed, "m", "2", "1", RolloutMode.CANARY, Task.CLASSIFICATION, 1,
                guards, Rollout.DEFAULT_STEPS, 0);
        return run.run(r, 3_600_000);
    }

    @Test
    void aCandidateTenPointsLessAccurateIsRolledBackBeforeFivePercentOfQueries() {
        for (long seed = 1; seed <= 5; seed++) {
            RolloutOutcome o = run(new SimVersion(0.8, 10, 10), seed);
            assertThat(o.rollout().status()).isEqualTo(RolloutStatus.ROLLED_BACK);
            assertThat(o.candidateFraction()).isLessThan(0.05);
            assertThat(o.rollout().history().get(o.rollout().history().size() - 1).reason())
                    .contains("loss_increase");
        }
    }

    @Test
    void aCandidateMissingTheSloOnFivePercentIsRolledBackWithinThirtySeconds() {
        SimVersion slow = new SimVersion(0.9, 10, 30);
        assertThat(slow.missRate(100)).isGreaterThanOrEqualTo(0.049);
        for (long seed = 1; seed <= 5; seed++) {
            RolloutOutcome o = run(slow, seed);
            assertThat(o.rollout().status()).isEqualTo(RolloutStatus.ROLLED_BACK);
            assertThat(o.finishedAtMillis()).isLessThanOrEqualTo(30_000);
            assertThat(o.rollout().history().get(o.rollout().history().size() - 1).reason())
                    .contains("slo_miss_increase");
        }
    }

    @Test
    void anEqualOrBetterCandidateIsPromotedToAllQueries() {
        for (SimVersion good : List.of(new SimVersion(0.9, 10, 10), new SimVersion(0.95, 5, 5))) {
            RolloutOutcome o = run(good, 3);
            assertThat(o.rollout().status()).isEqualTo(RolloutStatus.PROMOTED);
            assertThat(o.rollout().share()).isEqualTo(1.0);
        }
    }

    @Test
    void anEqualCandidateStartedColdIsPromotedOnceWarmedUpAndRolledBackWithoutWarmUp() {
        // its first 30 answers take 200 ms more: past the 100 ms SLO
        SimVersion cold = new SimVersion(0.9, 10, 10, 30, 200);
        Guards d = Guards.DEFAULTS;
        Guards noWarmup = new Guards(d.maxSloMissIncrease(), d.maxErrorRate(), d.maxLossIncrease(), d.minFeedback(),
                d.confidence(), d.minStepQueries(), d.minStepMillis(), 0);
        for (long seed = 1; seed <= 3; seed++) {
            RolloutOutcome judgedCold = run(cold, noWarmup, seed);
            assertThat(judgedCold.rollout().status()).isEqualTo(RolloutStatus.ROLLED_BACK);
            assertThat(judgedCold.rollout().history().get(judgedCold.rollout().history().size() - 1).reason())
                    .contains("slo_miss_increase");
            RolloutOutcome warmed = run(cold, seed);
            assertThat(warmed.rollout().status()).isEqualTo(RolloutStatus.PROMOTED);
        }
    }
}
