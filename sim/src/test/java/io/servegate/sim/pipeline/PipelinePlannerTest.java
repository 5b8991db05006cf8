package io.servegate.sim.pipeline;

import static io.servegate.sim.pipeline.PipelineEstimatorTest.chain;
import static io.servegate.sim.pipeline.PipelineEstimatorTest.uniform;
import static org.assertj.core.api.Assertions.assertThat;

import io.servegate.sim.Scenario;
import io.servegate.sim.cli.ScenarioBuilder;
import io.servegate.sim.latency.HardwareCosts;
import io.servegate.sim.latency.LinearLatency;
import io.servegate.sim.latency.ModelProfiles;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The planner on cases small enough to work out by hand, and against its baselines. */
class PipelinePlannerTest {

    private static final long MS = 1_000_000;

    private static LinearLatency linear(double betaMs, double alphaMs) {
        return new LinearLatency(Math.round(betaMs * MS), Math.round(alphaMs * MS), 0);
    }

    private static PipelinePlanner planner(PipelineSpec spec, ModelProfiles p, HardwareCosts costs, Scenario sample) {
        return new PipelinePlanner(new PipelineEstimator(spec, p, sample, 0), costs, 64, 64);
    }

    /**
     * One stage, ℓ(b) = 4 + b ms, one kind at 1 per hour, a query every 2 ms (500/s). One replica
     * keeps up only with batches above 4 (b / ℓ(b) > 0.5 per ms); it then settles where
     * b = λ·ℓ(b), b = 4 and ℓ = 8 ms, so a query waits at most one batch and takes at most 16 ms.
     * Under a 20 ms SLO the answer is one replica; under 4.5 ms, below ℓ(1) = 5 ms, there is none.
     */
    @Test
    void oneStageGetsOneReplicaBatchingAboveFour() {
        PipelineSpec spec = chain(20, "m");
        ModelProfiles p = new ModelProfiles(Map.of("m", Map.of("k", linear(4, 1))));
        HardwareCosts costs = new HardwareCosts(Map.of("k", 1.0));
        PipelinePlan plan = planner(spec, p, costs, uniform(500, 4)).plan(PlanStrategy.INFERLINE).orElseThrow();
        assertThat(plan.config().stage(0).replicas()).isEqualTo(1);
        assertThat(plan.config().stage(0).maxBatch()).isGreaterThan(4);
        assertThat(plan.costPerHour()).isEqualTo(1.0);
        assertThat(plan.estimate().p99Ms()).isBetween(15.0, 16.1);
        // held at batch size 1 it needs ⌈500 × 5 ms⌉ = 3 replicas
        PipelinePlan one = planner(spec, p, costs, uniform(500, 4)).plan(PlanStrategy.BATCH_ONE).orElseThrow();
        assertThat(one.config().stage(0)).isEqualTo(new StageConfig("k", 3, 1));
        assertThat(planner(spec.withSloMs(4.5), p, costs, uniform(500, 4)).plan(PlanStrategy.INFERLINE)).isEmpty();
    }

    /**
     * Two stages at 50 queries/s, where one replica each is plenty. Stage a runs on "fast" (2 ms,
     * 10 per hour) or "slow" (4 ms, 1 per hour), stage b only on "fast" (1 ms). With a 20 ms SLO
     * the planner starts a on the fastest kind and downgrades it: cost 1 + 10. With a 4.5 ms SLO
     * "slow" cannot meet it (4 + 1 ms of service, plus waiting), so a stays on "fast": cost 20.
     */
    @Test
    void theCheaperHardwareIsChosenWhereItMeetsTheSlo() {
        PipelineSpec spec = chain(20, "a", "b");
        ModelProfiles p = new ModelProfiles(Map.of(
                "a", Map.of("fast", linear(1.5, 0.5), "slow", linear(3, 1)),
                "b", Map.of("fast", linear(0.5, 0.5))));
        HardwareCosts costs = new HardwareCosts(Map.of("fast", 10.0, "slow", 1.0));
        PipelinePlan loose = planner(spec, p, costs, uniform(50, 4)).plan(PlanStrategy.INFERLINE).orElseThrow();
        assertThat(loose.config().stage(0).hardware()).isEqualTo("slow");
        assertThat(loose.config().stage(1).hardware()).isEqualTo("fast");
        assertThat(loose.costPerHour()).isEqualTo(11.0);
        PipelinePlan tight = planner(spec.withSloMs(4.5), p, costs, uniform(50, 4)).plan(PlanStrategy.INFERLINE)
                .orElseThrow();
        assertThat(tight.config().stages()).extracting(StageConfig::hardware).containsExactly("fast", "fast");
        assertThat(tight.costPerHour()).isEqualTo(20.0);
    }

    /** Coarse-grained replicates the whole pipeline: the light stage gets as many replicas as the heavy one. */
    @Test
    void coarseGrainedGivesEveryStageTheSameReplicasAndBatch() {
        PipelineSpec spec = chain(30, "heavy", "light");
        ModelProfiles p = new ModelProfiles(Map.of("heavy", Map.of("k", linear(8, 2)), "light", Map.of("k", linear(1, 0.1))));
        HardwareCosts costs = new HardwareCosts(Map.of("k", 1.0));
        PipelinePlanner planner = planner(spec, p, costs, uniform(300, 4));
        PipelinePlan cg = planner.plan(PlanStrategy.COARSE_GRAINED).orElseThrow();
        assertThat(cg.config().stage(0).replicas()).isEqualTo(cg.config().stage(1).replicas()).isGreaterThan(1);
        assertThat(cg.config().stage(0).maxBatch()).isEqualTo(cg.config().stage(1).maxBatch());
        PipelinePlan inferline = planner.plan(PlanStrategy.INFERLINE).orElseThrow();
        assertThat(inferline.config().stage(1).replicas()).isEqualTo(1);
        assertThat(inferline.costPerHour()).isLessThan(cg.costPerHour());
    }

    /** The shipped three-stage example: the plan beats both baselines and meets the SLO on a fresh trace. */
    @Test
    void theExamplePipelineCostsLessThanBothBaselines() throws Exception {
        Path dir = Path.of("pipelines");
        PipelineSpec spec = PipelineSpec.read(dir.resolve("three-stage.json")).withSloMs(3 * 8.74);
        ModelProfiles p = ModelProfiles.read(List.of(dir.resolve("preprocess.json"), dir.resolve("classify.json"),
                dir.resolve("rank.json")));
        HardwareCosts costs = HardwareCosts.read(dir.resolve("costs.json"));
        PipelinePlanner planner = new PipelinePlanner(new PipelineEstimator(spec, p,
                new ScenarioBuilder().rate(300).durationS(5).seed(1).build(), 0), costs, 64, 64);
        PipelinePlan plan = planner.plan(PlanStrategy.INFERLINE).orElseThrow();
        assertThat(plan.costPerHour()).isLessThan(planner.plan(PlanStrategy.COARSE_GRAINED).orElseThrow().costPerHour())
                .isLessThan(planner.plan(PlanStrategy.BATCH_ONE).orElseThrow().costPerHour());
        PipelineEstimate fresh = new PipelineEstimator(spec, p, new ScenarioBuilder().rate(300).durationS(5).seed(2).build(),
                0).estimate(plan.config());
        assertThat(fresh.attainment()).isGreaterThanOrEqualTo(0.98);
    }

    /** A gateway's stage deadlines from a plan: the stages' p99s scaled so the longest path uses the whole SLO. */
    @Test
    void stageBudgetsSplitTheSloInProportionToTheStagesP99() {
        PipelineSpec spec = new PipelineSpec("fan", 30,
                List.of(new PipelineStage("a", "a"), new PipelineStage("b", "b"), new PipelineStage("c", "c")),
                List.of(new PipelineEdge("a", "b", 1), new PipelineEdge("a", "c", 1)));
        ModelProfiles p = new ModelProfiles(Map.of("a", Map.of("k", linear(1, 1)), "b", Map.of("k", linear(3, 1)),
                "c", Map.of("k", linear(1, 1))));
        PipelineConfig c = PipelineEstimatorTest.everywhere(spec, 1);
        PipelineEstimate e = new PipelineEstimator(spec, p, uniform(50, 4), 0).estimate(c);
        // exact latencies at low load: 2, 4 and 2 ms, up to the histogram's precision
        double[] p99 = e.stages().stream().mapToDouble(PipelineEstimate.StageEstimate::p99Ms).toArray();
        assertThat(p99[0]).isCloseTo(2, org.assertj.core.data.Percentage.withPercentage(0.1));
        assertThat(p99[1]).isCloseTo(4, org.assertj.core.data.Percentage.withPercentage(0.1));
        assertThat(p99[2]).isCloseTo(2, org.assertj.core.data.Percentage.withPercentage(0.1));
        long[] budgets = new PipelinePlan(PlanStrategy.INFERLINE, c, 3, e, 1).stageBudgetsMicros(spec, p);
        // longest path a -> b: 2 + 4 ms takes the 30 ms SLO, so every p99 is scaled by 5
        assertThat(budgets[0]).isBetween(9_990L, 10_000L);
        assertThat(budgets[1]).isBetween(19_990L, 20_000L);
        assertThat(budgets[2]).isEqualTo(budgets[0]);
        assertThat(budgets[0] + budgets[1]).isLessThanOrEqualTo(30_000L);
    }
}
