package io.servegate.sim.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.servegate.sim.Scenario;
import io.servegate.sim.cli.ScenarioBuilder;
import io.servegate.sim.latency.LatencyModel;
import io.servegate.sim.latency.LinearLatency;
import io.servegate.sim.latency.ModelProfiles;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.assertj.core.data.Percentage;
import org.junit.jupiter.api.Test;

/** The estimator against answers computed by hand: deterministic arrivals and exact latencies. */
class PipelineEstimatorTest {

    private static final long MS = 1_000_000;

    /** Evenly spaced arrivals at {@code rate} for {@code seconds}. */
    static Scenario uniform(double rate, double seconds) {
        return new ScenarioBuilder().arrivals(ScenarioBuilder.Arrivals.UNIFORM).rate(rate).durationS(seconds).build();
    }

    /** Each named model on one kind "k" with exact β + α·b, in ms. */
    static ModelProfiles exact(Map<String, double[]> betaAlphaMs) {
        Map<String, Map<String, LatencyModel>> m = new java.util.LinkedHashMap<>();
        betaAlphaMs.forEach((model, ba) -> m.put(model,
                Map.of("k", new LinearLatency(Math.round(ba[0] * MS), Math.round(ba[1] * MS), 0))));
        return new ModelProfiles(m);
    }

    /** Every stage on "k" with {@code replicas} and batch size 1. */
    static PipelineConfig everywhere(PipelineSpec spec, int replicas) {
        List<StageConfig> s = new ArrayList<>();
        spec.stages().forEach(x -> s.add(new StageConfig("k", replicas, 1)));
        return new PipelineConfig(s);
    }

    static PipelineSpec chain(double sloMs, String... models) {
        List<PipelineStage> stages = new ArrayList<>();
        List<PipelineEdge> edges = new ArrayList<>();
        for (int i = 0; i < models.length; i++) {
            stages.add(new PipelineStage(models[i], models[i]));
            if (i > 0) {
                edges.add(new PipelineEdge(models[i - 1], models[i], 1));
            }
        }
        return new PipelineSpec("chain", sloMs, stages, edges);
    }

    @Test
    void belowCapacityEveryQueryTakesExactlyTheServiceTime() {
        PipelineSpec spec = chain(10, "a");
        ModelProfiles p = exact(Map.of("a", new double[] {4, 1}));
        PipelineEstimate e = new PipelineEstimator(spec, p, uniform(100, 10), 0).estimate(everywhere(spec, 1));
        assertThat(e.arrived()).isEqualTo(999); // arrivals at 10 ms, 20 ms, … before 10 s
        assertThat(e.p50Ms()).isCloseTo(5, Percentage.withPercentage(0.1));
        assertThat(e.p99Ms()).isCloseTo(5, Percentage.withPercentage(0.1));
        assertThat(e.maxMs()).isCloseTo(5, Percentage.withPercentage(0.1));
        assertThat(e.attainment()).isEqualTo(1.0);
        assertThat(e.stages().get(0).utilisation()).isCloseTo(0.5, within(0.01)); // 100/s × 5 ms
        PipelineEstimate tight = new PipelineEstimator(spec.withSloMs(4.9), p, uniform(100, 10), 0)
                .estimate(everywhere(spec, 1));
        assertThat(tight.attainment()).isEqualTo(0.0);
    }

    /**
     * D/D/1 past capacity: a query every 1 ms, each served alone in 1.5 ms, so the k-th (from 0)
     * waits 0.5·k ms and takes 1.5 + 0.5·k ms. Of 999, the p99 is the ⌈0.99·999⌉ = 990th smallest: k = 989.
     */
    @Test
    void overloadedQueueGrowsLinearly() {
        PipelineSpec spec = chain(100, "a");
        PipelineEstimate e = new PipelineEstimator(spec, exact(Map.of("a", new double[] {1, 0.5})), uniform(1000, 1), 0)
                .estimate(everywhere(spec, 1));
        assertThat(e.arrived()).isEqualTo(999);
        assertThat(e.p99Ms()).isCloseTo(1.5 + 0.5 * 989, Percentage.withPercentage(0.1));
        assertThat(e.maxMs()).isCloseTo(1.5 + 0.5 * 998, Percentage.withPercentage(0.1));
        // within 100 ms: 1.5 + 0.5·k <= 100 for k <= 197
        assertThat(e.withinSlo()).isBetween(197L, 198L);
        assertThat(e.stages().get(0).meanBatch()).isEqualTo(1.0);
    }

    /** The same overload with batches of up to 8: the replica keeps up, and queries wait at most one batch. */
    @Test
    void batchingAbsorbsTheOverload() {
        PipelineSpec spec = chain(100, "a");
        PipelineConfig c = new PipelineConfig(List.of(new StageConfig("k", 1, 8)));
        PipelineEstimate e = new PipelineEstimator(spec, exact(Map.of("a", new double[] {1, 0.5})), uniform(1000, 1), 0)
                .estimate(c);
        // steady state: b = λ·ℓ(b) = 1 + 0.5·b, so b = 2 and ℓ = 2 ms; a query waits < 2 ms, then 2 ms
        assertThat(e.maxMs()).isLessThan(4.01);
        assertThat(e.stages().get(0).meanBatch()).isCloseTo(2, within(0.05));
    }

    @Test
    void aChainAddsItsStagesAndAFanOutWaitsForItsSlowestBranch() {
        ModelProfiles p = exact(Map.of("a", new double[] {1, 1}, "b", new double[] {3, 1}, "c", new double[] {6, 1},
                "d", new double[] {0.5, 0.5}));
        PipelineSpec chain = chain(50, "a", "b", "d");
        PipelineEstimate e = new PipelineEstimator(chain, p, uniform(50, 4), 0).estimate(everywhere(chain, 1));
        assertThat(e.p99Ms()).isCloseTo(2 + 4 + 1, Percentage.withPercentage(0.1));
        PipelineSpec diamond = new PipelineSpec("diamond", 50,
                List.of(new PipelineStage("a", "a"), new PipelineStage("b", "b"), new PipelineStage("c", "c"),
                        new PipelineStage("d", "d")),
                List.of(new PipelineEdge("a", "b", 1), new PipelineEdge("a", "c", 1), new PipelineEdge("b", "d", 1),
                        new PipelineEdge("c", "d", 1)));
        PipelineEstimate f = new PipelineEstimator(diamond, p, uniform(50, 4), 0).estimate(everywhere(diamond, 1));
        assertThat(f.p50Ms()).isCloseTo(2 + 7 + 1, Percentage.withPercentage(0.1)); // d after the slower of b (4) and c (7)
        assertThat(f.stages()).allSatisfy(s -> assertThat(s.scaleFactor()).isEqualTo(1.0));
    }

    @Test
    void aConditionalEdgeIsTakenWithItsProbabilityAndASkippedStageSkipsWhatFollowsIt() {
        ModelProfiles p = exact(Map.of("a", new double[] {1, 1}, "b", new double[] {3, 1}, "c", new double[] {1, 1}));
        PipelineSpec spec = new PipelineSpec("cascade", 50,
                List.of(new PipelineStage("a", "a"), new PipelineStage("b", "b"), new PipelineStage("c", "c")),
                List.of(new PipelineEdge("a", "b", 0.3), new PipelineEdge("b", "c", 1)));
        PipelineEstimate e = new PipelineEstimator(spec, p, uniform(100, 100), 0).estimate(everywhere(spec, 1));
        assertThat(e.arrived()).isEqualTo(9_999);
        assertThat(e.stages().get(1).scaleFactor()).isCloseTo(0.3, within(0.015));
        assertThat(e.stages().get(2).scaleFactor()).isEqualTo(e.stages().get(1).scaleFactor());
        assertThat(e.p50Ms()).isCloseTo(2, Percentage.withPercentage(0.1));            // most stop after a
        assertThat(e.p99Ms()).isCloseTo(2 + 4 + 2, Percentage.withPercentage(0.1));    // the rest run all three
    }

    @Test
    void theSameTraceGivesTheSameEstimate() {
        PipelineSpec spec = chain(30, "a", "b");
        ModelProfiles p = new ModelProfiles(Map.of("a", Map.of("k", new LinearLatency(2 * MS, MS, 0.3)),
                "b", Map.of("k", new LinearLatency(3 * MS, MS / 2, 0.3))));
        Scenario sample = new ScenarioBuilder().rate(400).durationS(5).seed(7).build();
        PipelineEstimator est = new PipelineEstimator(spec, p, sample, 0);
        PipelineConfig c = new PipelineConfig(List.of(new StageConfig("k", 2, 4), new StageConfig("k", 2, 4)));
        assertThat(est.estimate(c)).isEqualTo(est.estimate(c));
    }
}
