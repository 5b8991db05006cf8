package io.servegate.sim.pipeline;

import io.servegate.core.scheduling.PolicyKind;
import io.servegate.core.scheduling.SchedulerConfig;
import io.servegate.sim.Autoscaling;
import io.servegate.sim.ModelSpec;
import io.servegate.sim.PipelineRouter;
import io.servegate.sim.ReplicaSpec;
import io.servegate.sim.Scenario;
import io.servegate.sim.SimResult;
import io.servegate.sim.Simulation;
import io.servegate.sim.latency.LatencyModel;
import io.servegate.sim.latency.ModelProfiles;
import java.util.ArrayList;
import java.util.List;

/**
 * InferLine's estimator (SoCC'20, §4.2): runs a pipeline configuration on a sample arrival trace
 * in virtual time and returns every query's end-to-end latency, summarised.
 *
 * <p>Each stage is the core's {@link io.servegate.core.scheduling.ModelScheduler} with the
 * Clipper policy at a fixed batch size, which is InferLine's centralised batched queue: an idle
 * replica takes up to the stage's maximum batch of the queued queries, oldest first. Queries carry
 * no deadline into the stages, so none is dropped and every latency is measured, late or not.
 * The trace is the same for every configuration (same arrivals, same seed), so estimates differ
 * only by the configuration.
 */
public final class PipelineEstimator {

    private final PipelineSpec spec;
    private final ModelProfiles profiles;
    private final Scenario sample;
    private final long overheadNanos;
    private int runs;

    /**
     * @param spec the pipeline, with its SLO
     * @param profiles every stage model's latency on each hardware kind
     * @param sample the arrivals (its workload, duration and seed; its models are not used)
     * @param overheadNanos round-trip transport overhead per batch at every stage
     */
    public PipelineEstimator(PipelineSpec spec, ModelProfiles profiles, Scenario sample, long overheadNanos) {
        if (Double.isNaN(spec.sloMs())) {
            throw new IllegalArgumentException("the pipeline needs an SLO to be estimated against");
        }
        this.spec = spec;
        this.profiles = profiles;
        this.sample = sample;
        this.overheadNanos = overheadNanos;
    }

    public PipelineSpec spec() {
        return spec;
    }

    public ModelProfiles profiles() {
        return profiles;
    }

    /** Configurations estimated so far. */
    public int runs() {
        return runs;
    }

    /** Runs {@code config} on the sample trace. */
    public PipelineEstimate estimate(PipelineConfig config) {
        runs++;
        return summarise(execute(config, sample, null));
    }

    /** One run: the simulation's result and the router's record of the queries. */
    record Execution(SimResult result, PipelineRouter router) {
    }

    /**
     * Runs {@code config} on {@code arrivals}' workload; with {@code tuning}, stage {@code i}'s
     * replicas are scaled by {@code tuning.get(i)} (null: static).
     */
    Execution execute(PipelineConfig config, Scenario arrivals, List<Autoscaling> tuning) {
        if (config.stages().size() != spec.stages().size()) {
            throw new IllegalArgumentException("the configuration has " + config.stages().size() + " stages, the pipeline "
                    + spec.stages().size());
        }
        long slo = Math.round(spec.sloMs() * 1e6);
        List<ModelSpec> models = new ArrayList<>();
        for (int i = 0; i < config.stages().size(); i++) {
            PipelineStage stage = spec.stages().get(i);
            StageConfig c = config.stage(i);
            LatencyModel latency = profiles.latency(stage.model(), c.hardware());
            List<ReplicaSpec> replicas = new ArrayList<>();
            for (int k = 0; k < c.replicas(); k++) {
                replicas.add(ReplicaSpec.of(stage.name() + "/r" + k, 1, latency, overheadNanos));
            }
            SchedulerConfig sc = SchedulerConfig.of(PolicyKind.CLIPPER, slo).withBatchSizes(c.maxBatch(), c.maxBatch())
                    .withQueueCapacity(Integer.MAX_VALUE);
            models.add(new ModelSpec(stage.name(), sc, replicas, tuning == null ? null : tuning.get(i)));
        }
        Scenario scenario = new Scenario(models, arrivals.workload(), arrivals.durationNanos(), arrivals.seed(), 0,
                arrivals.settings());
        PipelineRouter router = new PipelineRouter(spec);
        return new Execution(Simulation.run(scenario, router), router);
    }

    /** What a run's queries and stages show, as the planner reads it. */
    PipelineEstimate summarise(Execution run) {
        SimResult result = run.result();
        PipelineRouter router = run.router();
        long slo = Math.round(spec.sloMs() * 1e6);
        List<PipelineEstimate.StageEstimate> stages = new ArrayList<>();
        for (int i = 0; i < result.models().size(); i++) {
            String name = result.models().get(i).spec().name();
            double busy = result.replicas().stream().filter(r -> r.model().equals(name))
                    .mapToDouble(r -> 1 - r.idleFraction()).average().orElse(0);
            stages.add(new PipelineEstimate.StageEstimate(
                    router.arrived == 0 ? 0 : (double) router.visits[i] / router.arrived,
                    result.models().get(i).stats().meanBatchSize(), busy, result.models().get(i).stats().latencyMs(99)));
        }
        var h = router.latency;
        boolean any = h.getTotalCount() > 0;
        return new PipelineEstimate(router.arrived, any ? h.getCountBetweenValues(0, slo) : 0, router.failed,
                any ? h.getValueAtPercentile(50) / 1e6 : Double.NaN, any ? h.getValueAtPercentile(99) / 1e6 : Double.NaN,
                any ? h.getMaxValue() / 1e6 : Double.NaN, stages);
    }
}
