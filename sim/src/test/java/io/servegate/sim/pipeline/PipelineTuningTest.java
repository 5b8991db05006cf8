package io.servegate.sim.pipeline;

import static io.servegate.sim.pipeline.PipelineEstimatorTest.chain;
import static io.servegate.sim.pipeline.PipelineEstimatorTest.exact;
import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.sim.Scenario;
import io.servegate.sim.cli.ScenarioBuilder;
import io.servegate.sim.latency.HardwareCosts;
import io.servegate.sim.latency.ModelProfiles;
import io.servegate.sim.workload.ScalingWorkloads;
import io.servegate.workload.arrival.RateTrace;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The per-stage tuner in virtual time: a plan for one rate, on a trace that triples it. */
class PipelineTuningTest {

    /** 200/s for 20 s, 600/s for 40 s, 200/s for 20 s, Poisson. */
    private static final int[] PHASES = {20, 40, 20};
    private static final PipelineSpec SPEC = chain(60, "a", "b");
    /** a: ℓ(b) = 2 + 0.5·b ms; b: 8 + 2·b ms. */
    private static final ModelProfiles PROFILES = exact(Map.of("a", new double[] {2, 0.5}, "b", new double[] {8, 2}));
    /**
     * One replica each at batches of up to 8: b's replica answers at most 8 queries per 24 ms,
     * 333/s, plenty for 200/s and not half of 600/s.
     */
    private static final PipelineConfig PLAN = new PipelineConfig(List.of(new StageConfig("k", 1, 8),
            new StageConfig("k", 1, 8)));
    private static final HardwareCosts COSTS = new HardwareCosts(Map.of("k", 1.0));
    private static final PipelineTuning.Settings SETTINGS = new PipelineTuning.Settings(1, 16, 2_000_000_000L,
            1_000_000_000L, 15_000_000_000L);

    private static Scenario steps() {
        RateTrace trace = ScalingWorkloads.steps(new double[] {200, 600, 200}, PHASES);
        return new ScenarioBuilder().trace(trace).rate(trace.meanRate()).durationS(trace.durationNanos() / 1e9).seed(3)
                .build();
    }

    private static List<PipelineTuning.Outcome> run(long... budgetsMicros) {
        PipelineEstimator estimator = new PipelineEstimator(SPEC, PROFILES, steps(), 0);
        return PipelineTuning.compare(estimator, PLAN, budgetsMicros, steps(), PHASES, SETTINGS, COSTS);
    }

    @Test
    void tuningKeepsTheSloWhereTheStaticPlanFails() {
        List<PipelineTuning.Outcome> both = run(12_000, 48_000);
        PipelineTuning.Outcome fixed = both.get(0);
        PipelineTuning.Outcome tuned = both.get(1);
        assertThat(fixed.tuned()).isFalse();
        assertThat(tuned.tuned()).isTrue();
        // at the planned rate both meet the SLO
        assertThat(fixed.phaseAttainment().get(0)).isGreaterThan(0.99);
        assertThat(tuned.phaseAttainment().get(0)).isGreaterThan(0.99);
        // tripled, the static plan's queue at b grows without end; the tuned b gets replicas within
        // seconds, and loses only what queued before they joined
        assertThat(fixed.phaseAttainment().get(1)).isLessThan(0.2);
        assertThat(tuned.phaseAttainment().get(1)).isGreaterThan(0.8);
        assertThat(tuned.phaseAttainment().get(2)).isGreaterThan(0.99);
        assertThat(tuned.attainment()).isGreaterThan(0.85);
        assertThat(fixed.attainment()).isLessThan(0.7);
        PipelineTuning.StageOutcome b = tuned.stages().get(1);
        assertThat(b.peakReplicas()).isGreaterThanOrEqualTo(2);
        assertThat(b.decisions()).isPositive();
        assertThat(b.budgetMicros()).isEqualTo(48_000);
        // the static plan pays for its 2 replicas all along; tuning pays for more only while they are needed
        assertThat(fixed.costPerHour()).isEqualTo(2.0);
        assertThat(tuned.costPerHour()).isGreaterThan(2.0).isLessThan(2.0 * b.peakReplicas());
    }

    /**
     * A stage's autoscaler plans for the stage's budget: with 5 ms, a (ℓ(1) = 2.5 ms) can take
     * little batching and needs a second replica at 600/s; with 30 ms one replica batches enough.
     */
    @Test
    void eachStagePlansForItsOwnBudget() {
        PipelineTuning.StageOutcome tight = run(5_000, 55_000).get(1).stages().get(0);
        PipelineTuning.StageOutcome loose = run(30_000, 30_000).get(1).stages().get(0);
        assertThat(tight.peakReplicas()).isGreaterThan(loose.peakReplicas());
        assertThat(loose.peakReplicas()).isEqualTo(1);
    }

    @Test
    void theSameTraceGivesTheSameOutcome() {
        assertThat(run(12_000, 48_000)).isEqualTo(run(12_000, 48_000));
    }
}
