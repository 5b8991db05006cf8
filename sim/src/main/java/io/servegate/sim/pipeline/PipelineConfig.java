package io.servegate.sim.pipeline;

import io.servegate.sim.latency.HardwareCosts;
import java.util.ArrayList;
import java.util.List;

/**
 * A candidate deployment of a pipeline: one {@link StageConfig} per stage, in the order of
 * {@link PipelineSpec#stages()}. Values, so a planner can remember what it has estimated.
 */
public record PipelineConfig(List<StageConfig> stages) {

    public PipelineConfig {
        stages = List.copyOf(stages);
    }

    /** This configuration with stage {@code i} replaced. */
    public PipelineConfig with(int i, StageConfig stage) {
        List<StageConfig> s = new ArrayList<>(stages);
        s.set(i, stage);
        return new PipelineConfig(s);
    }

    public StageConfig stage(int i) {
        return stages.get(i);
    }

    /** What the configuration costs per hour: every stage's replicas at their hardware's price. */
    public double costPerHour(HardwareCosts costs) {
        double c = 0;
        for (StageConfig s : stages) {
            c += s.replicas() * costs.perReplicaHour(s.hardware());
        }
        return c;
    }
}
